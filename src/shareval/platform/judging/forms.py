"""The campaign form: every field checked here, so the page can show the
problems beside what was typed (a form with one error keeps every field)."""
from __future__ import annotations

import yaml
from django import forms
from django.contrib.auth import get_user_model

from shareval.platform.competitions.models import Membership

from shareval.platform.judging import designs
from shareval.platform.judging.exhaustive_build import check_dataset
from shareval.platform.judging.models import Campaign


class CampaignForm(forms.Form):
    title = forms.CharField(max_length=200)
    dataset = forms.ModelChoiceField(queryset=None, error_messages={
        "required": "choose one", "invalid_choice": "choose one"})
    design = forms.ChoiceField(choices=Campaign.DESIGNS)
    k = forms.IntegerField(min_value=1, max_value=20, initial=2)
    timeout = forms.IntegerField(min_value=1, max_value=24 * 60, initial=30)
    judges = forms.CharField(required=False)
    n = forms.IntegerField(min_value=1, max_value=20_000, initial=50, required=False)
    docs = forms.IntegerField(min_value=0, max_value=20_000, initial=0, required=False)
    seed = forms.IntegerField(initial=0, required=False)
    config = forms.CharField(required=False)
    on_leaderboard = forms.BooleanField(required=False)
    auto = forms.BooleanField(required=False)       # config's ``auto: true``, ticked
    hourly_rate = forms.FloatField(min_value=0, required=False)
    seconds_per_judgment = forms.FloatField(min_value=0, required=False)
    items = forms.FileField(required=False)

    def __init__(self, comp, datasets, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.comp = comp
        self.fields["dataset"].queryset = datasets

    def clean_config(self) -> dict:
        try:
            config = yaml.safe_load(self.cleaned_data.get("config") or "") or {}
        except yaml.YAMLError as e:
            raise forms.ValidationError(str(e)) from None
        if not isinstance(config, dict):
            raise forms.ValidationError("the configuration must be a mapping")
        return config

    def clean_judges(self) -> list:
        names = [n.strip() for n in (self.cleaned_data.get("judges") or "").replace(",", " ")
                 .split() if n.strip()]
        judges = list(get_user_model().objects.filter(username__in=names))
        missing = set(names) - {u.username for u in judges}
        if missing:
            raise forms.ValidationError(f"no such user(s) {sorted(missing)}")
        in_teams = Membership.objects.filter(team__competition=self.comp, user__in=judges,
                                             team__is_baseline=False).values_list(
            "user__username", flat=True)
        if in_teams:
            raise forms.ValidationError(f"{sorted(set(in_teams))} belong to a participating "
                                        f"team (judges must not judge their own team)")
        return judges

    def clean(self):
        data = super().clean()
        if data.get("auto") and isinstance(data.get("config"), dict):
            data["config"]["auto"] = True
        if data.get("design") == Campaign.CHAIN and isinstance(data.get("config"), dict):
            for p in designs.check_chains(data["config"]):
                self.add_error("config", p)
        if isinstance(data.get("config"), dict):
            from shareval.platform.judging import auto
            for p in auto.check_config(data.get("dataset"), data.get("design"), data["config"]):
                self.add_error("config", p)
        if data.get("design") == Campaign.EXHAUSTIVE and data.get("dataset") is not None:
            try:
                check_dataset(data["dataset"])
            except ValueError as e:
                self.add_error("design", str(e))
            if data.get("items"):
                self.add_error("items", "an exhaustive campaign annotates documents of the "
                                        "reference: leave the items file out")
        return data

    def problems(self) -> list[str]:
        """'field: message' lines, in the form's field order."""
        return [f"{name}: {m}" if name != "__all__" else m
                for name, msgs in self.errors.items() for m in msgs]
