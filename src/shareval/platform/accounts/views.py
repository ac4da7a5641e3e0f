"""Registration and the API-token page."""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .models import ApiToken


class RegisterForm(UserCreationForm):
    email = forms.EmailField(required=False)

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")


class ProfileForm(forms.Form):
    email = forms.EmailField(required=False, help_text="for password reset and notices")
    opt_out = forms.BooleanField(required=False, label="No non-essential mail",
                                 help_text="run results, released results, deadline reminders "
                                           "and announcements; decisions on your registration "
                                           "or team and password resets still come")


@login_required
def profile(request):
    """access24: the e-mail address and the opt-out of non-essential mail."""
    from shareval.platform.notifications.models import MailPreference
    pref, _ = MailPreference.objects.get_or_create(user=request.user)
    form = ProfileForm(request.POST or None,
                       initial={"email": request.user.email, "opt_out": pref.opt_out})
    if request.method == "POST" and form.is_valid():
        request.user.email = form.cleaned_data["email"]
        request.user.save(update_fields=["email"])
        pref.opt_out = form.cleaned_data["opt_out"]
        pref.save(update_fields=["opt_out"])
        messages.success(request, "Profile saved.")
        return redirect("profile")
    return render(request, "shareval/profile.html", {"form": form})


def register(request):
    form = RegisterForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome, {user.username}. Join or create a team on a "
                                  f"competition's page.")
        return redirect("home")
    return render(request, "shareval/register.html", {"form": form})


@login_required
def tokens(request):
    new_key = None
    if request.method == "POST":
        _, new_key = ApiToken.issue(request.user, request.POST.get("name", "token"))
    return render(request, "shareval/tokens.html",
                  {"tokens": request.user.api_tokens.all(), "new_key": new_key})


@login_required
@require_POST
def revoke_token(request, pk):
    tok = get_object_or_404(ApiToken, pk=pk, user=request.user)
    if tok.revoked is None:
        n = tok.revoke()
        messages.success(request, f"Token {tok.name} revoked" +
                         (f", with {n - 1} tokens created from it." if n > 1 else "."))
    return redirect("tokens")


def logout_page(request):
    """GET: a page with the log-out button (a link or typed address cannot log out:
    that would let other sites log users out); POST: log out, then the home page."""
    if request.method == "POST":
        logout(request)
        messages.success(request, "You are logged out.")
        return redirect("home")
    return render(request, "shareval/logout.html")
