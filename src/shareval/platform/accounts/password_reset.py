"""*Forgot your password?*: Django's reset view and tokens, with two changes.

- Every request gets the same answer (the "check your mail" page) and does
  the same work: it is counted against the limits of ``mail_limits`` and, if
  under them, handed to the background thread, which looks the address up
  and mails the link after the response (``background``). An unknown address
  gets the same work there (a link made and rendered for a stand-in account,
  sent to no one), so not even the load on the server tells it from a known
  one. A known address, an unknown one and a refused request cannot be told
  apart.
- An address verified by some account gets the link for those accounts only;
  an address no account verified gets it for every account that gave it (as
  django-allauth's ``prefer_verified``): an unverified address still lets its
  owner back into their account.
"""
from __future__ import annotations

from django.contrib.auth import get_user_model, views as auth_views
from django.contrib.auth.forms import PasswordResetForm
from django.http import HttpResponseRedirect

from shareval.platform.accounts import addresses, background, mail_limits
from shareval.platform.accounts.models import MailRequest, VerifiedAddress


class ResetForm(PasswordResetForm):
    def get_users(self, email):
        users = list(super().get_users(email))
        ids = set(VerifiedAddress.objects.filter(address=addresses.normalized(email))
                  .values_list("user", flat=True))       # one query, known address or not
        verified = [u for u in users if u.pk in ids]
        return verified or users or [get_user_model()(username="-", email=email)]

    def send_mail(self, subject_template_name, email_template_name, context, from_email,
                  to_email, html_email_template_name=None):
        if context["user"].pk is None:      # nobody has the address: render, send to no one
            to_email = ""
        super().send_mail(subject_template_name, email_template_name, context, from_email,
                          to_email, html_email_template_name)


class ResetView(auth_views.PasswordResetView):
    form_class = ResetForm
    template_name = "shareval/password_reset.html"
    email_template_name = "shareval/password_reset_email.txt"
    subject_template_name = "shareval/password_reset_subject.txt"

    def form_valid(self, form):
        request = self.request
        response = HttpResponseRedirect(self.get_success_url())
        if not mail_limits.allow(MailRequest.RESET, form.cleaned_data["email"],
                                 mail_limits.client_address(request)):
            return response
        return background.after(response, form.save, domain_override=request.get_host(),
                                use_https=request.is_secure(),
                                token_generator=self.token_generator,
                                email_template_name=self.email_template_name,
                                subject_template_name=self.subject_template_name)
