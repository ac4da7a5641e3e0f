"""Forms for what people type: a reference, a review decision, a member, a
final decision. Related-to coding and rankings are checkbox/select grids
checked by the service (their fields depend on the publication)."""
from __future__ import annotations

from django import forms

from shareval.platform.annotation import spans
from shareval.platform.annotation.models import Member, Reference
from shareval.platform.annotation.service import REVIEW_ACTIONS


class ReferenceForm(forms.Form):
    kind = forms.ChoiceField(choices=Reference.KINDS, label="Type")
    name = forms.CharField(max_length=500, label="Data (title or description)")
    context = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}),
                              label="Context (the passage it is read from)")


def _offset(which: str) -> forms.IntegerField:
    need = f"{which}: select the reference in the text (no character offset was sent)"
    return forms.IntegerField(
        label="from character" if which == "begin" else "to", min_value=0,
        error_messages={"required": need, "invalid": f"{which}: a whole number",
                        "min_value": f"{which}: an offset is 0 or more"},
        widget=forms.NumberInput(attrs={"min": 0, "class": "offset"}))


class SpanForm(forms.Form):
    """A reference selected in the publication's stored text: only the type and
    the offsets are read; the name and the passage are derived from the text."""
    kind = forms.ChoiceField(choices=Reference.KINDS, label="Type")
    begin = _offset("begin")
    end = _offset("end")

    def __init__(self, *args, text: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.text = text

    def clean(self):
        data = super().clean()
        if "begin" in data and "end" in data:
            try:
                data["begin"], data["end"] = spans.check(self.text, data["begin"], data["end"])
            except spans.SpanError as e:
                self.add_error(e.field, str(e))
        return data


class ReviewForm(forms.Form):
    ref = forms.IntegerField(widget=forms.HiddenInput)
    action = forms.ChoiceField(choices=[(a, a) for a in REVIEW_ACTIONS])
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    kind = forms.ChoiceField(choices=Reference.KINDS, required=False)
    name = forms.CharField(max_length=500, required=False)
    context = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def clean(self):
        data = super().clean()
        if data.get("action") in ("unsure", "remove") and not (data.get("note") or "").strip():
            self.add_error("note", f"say why ({data['action']} needs a note)")
        return data


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Member.ROLES)


class FinalForm(forms.Form):
    ref = forms.IntegerField(widget=forms.HiddenInput)
    keep = forms.ChoiceField(choices=[("1", "keep"), ("0", "remove")])
    note = forms.CharField(required=False, max_length=2000)
