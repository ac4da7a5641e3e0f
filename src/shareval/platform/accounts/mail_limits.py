"""How many password-reset and verification mails may be asked for: per address
and per client address, in a sliding hour (``SHAREVAL_MAIL_REQUESTS_PER_ADDRESS``,
default 3, and ``SHAREVAL_MAIL_REQUESTS_PER_CLIENT``, default 10).

Every request is recorded, refused ones and ones for unknown addresses
included, so every request does the same database work and a hammering
client stays refused. The client's address is taken as django-axes takes it
for the log-in lock-out (behind the trusted proxy: the forwarded one).
"""
from __future__ import annotations

import datetime as dt

from axes.helpers import get_client_ip_address
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from shareval.platform.accounts.models import MailRequest

WINDOW = dt.timedelta(hours=1)


def address_key(address: str) -> str:
    """A keyed hash of the address: counted without being stored."""
    return salted_hmac("shareval.accounts.mail_limits", address.strip().lower(),
                       algorithm="sha256").hexdigest()


def client_address(request) -> str | None:
    return get_client_ip_address(request) or None


def allow(purpose: str, address: str, client: str | None, now=None) -> bool:
    """Record this request; True when the address and the client are both under
    their limits for ``purpose`` (their earlier requests of the hour counted)."""
    now = now or timezone.now()
    since = now - WINDOW
    key = address_key(address)
    with transaction.atomic():
        MailRequest.objects.filter(at__lt=since).delete()
        recent = MailRequest.objects.filter(purpose=purpose, at__gte=since)
        by_address = recent.filter(address_key=key).count()
        by_client = recent.filter(client=client).count() if client else 0
        MailRequest.objects.create(purpose=purpose, address_key=key, client=client, at=now)
    return (by_address < settings.MAIL_REQUESTS_PER_ADDRESS
            and by_client < settings.MAIL_REQUESTS_PER_CLIENT)
