"""Registration, the profile (e-mail address and its verification) and the API-token page."""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from shareval.platform.accounts import addresses, mail_limits
from shareval.platform.accounts.models import ApiToken, VerifiedAddress


class RegisterForm(UserCreationForm):
    email = forms.EmailField(required=False, label="E-mail address",
                             help_text="optional; for password reset and notices. It gets a "
                                       "link to verify it: invitations to competitions by "
                                       "address or domain count once it is verified.")

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")


class ProfileForm(forms.Form):
    email = forms.EmailField(required=False, label="E-mail address",
                             help_text="for password reset and notices; a new address gets a "
                                       "link to verify it")
    opt_out = forms.BooleanField(required=False, label="No non-essential mail",
                                 help_text="run results, released results, deadline reminders "
                                           "and announcements; decisions on your registration "
                                           "or team and password resets still come")


@login_required
def profile(request):
    """The e-mail address (and whether it is verified) and the opt-out of
    non-essential mail. A new address is unverified and gets a verification link."""
    from shareval.platform.notifications.models import MailPreference
    pref, _ = MailPreference.objects.get_or_create(user=request.user)
    form = ProfileForm(request.POST or None,
                       initial={"email": request.user.email, "opt_out": pref.opt_out})
    if request.method == "POST" and form.is_valid():
        changed = addresses.normalized(form.cleaned_data["email"]) != \
            addresses.normalized(request.user.email)
        request.user.email = form.cleaned_data["email"]
        request.user.save(update_fields=["email"])
        pref.opt_out = form.cleaned_data["opt_out"]
        pref.save(update_fields=["opt_out"])
        messages.success(request, "Profile saved.")
        if changed:
            offer_verification(request, request.user)
        return redirect("profile")
    return render(request, "shareval/profile.html", {
        "form": form, "verified": addresses.verified_email(request.user),
        "lifetime": addresses.lifetime()})


def offer_verification(request, user) -> None:
    """Mail a verification link to the user's (unverified) address and say so."""
    if not user.email or addresses.verified_email(user):
        return
    if addresses.send_link(user, mail_limits.client_address(request)):
        messages.info(request, f"A link to verify {user.email} is on its way: open it to "
                               f"confirm the address is yours. Invitations by e-mail address "
                               f"or domain count only once it is verified.")
    else:
        messages.error(request, f"No verification mail sent: too many were asked for "
                                f"{user.email} or from your network in the last hour. Try "
                                f"again later from your profile page.")


@login_required
@require_POST
def send_verification(request):
    if not request.user.email:
        messages.error(request, "Give an e-mail address first.")
    elif addresses.verified_email(request.user):
        messages.info(request, f"{request.user.email} is already verified.")
    else:
        offer_verification(request, request.user)
    return redirect("profile")


def verify_address(request, uidb64, token):
    """The link mailed to an address. Opening it shows a button (mail scanners
    that fetch links do not press it); pressing it verifies the address."""
    user = addresses.user_of_link(uidb64, token)
    if user is None:
        return render(request, "shareval/verify_address.html",
                      {"lifetime": addresses.lifetime()}, status=404)
    if request.method == "POST":
        addresses.mark_verified(user, VerifiedAddress.LINK)
        messages.success(request, f"{user.email} is verified for the account {user.username}.")
        return redirect("profile" if request.user == user else "home")
    return render(request, "shareval/verify_address.html", {"account": user})


def register(request):
    form = RegisterForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome, {user.username}. Join or create a team on a "
                                  f"competition's page.")
        offer_verification(request, user)
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
