"""Forms for what people type: a reference, a review decision, a member, a
final decision. Related-to coding and rankings are checkbox/select grids
checked by the service (their fields depend on the publication)."""
from __future__ import annotations

from django import forms

from shareval.platform.annotation.models import Member, Reference
from shareval.platform.annotation.service import REVIEW_ACTIONS


class ReferenceForm(forms.Form):
    kind = forms.ChoiceField(choices=Reference.KINDS, label="Type")
    name = forms.CharField(max_length=500, label="Data (title or description)")
    context = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}),
                              label="Context (the passage it is read from)")


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
