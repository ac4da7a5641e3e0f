"""Whether an account's address is verified, for templates: ``user|verified_email``
(the address, or empty) and ``user|unverified_address`` (the address while it is
not verified, else empty: the hint on the 404 page)."""
from django import template

from shareval.platform.accounts import addresses

register = template.Library()


@register.filter
def verified_email(user) -> str:
    return addresses.verified_email(user)


@register.filter
def unverified_address(user) -> str:
    if not getattr(user, "is_authenticated", False) or not user.email:
        return ""
    return "" if addresses.verified_email(user) else user.email
