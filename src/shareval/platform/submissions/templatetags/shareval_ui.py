"""Template filters (``{% load shareval_ui %}``): label, state_label, scorer_label, number,
value, with_intervals, when, zoned, markdown, results_label."""
from __future__ import annotations

from django import template
from django.utils import timezone
from django.utils.safestring import mark_safe
from markdown_it import MarkdownIt

from shareval.platform.labels import label as _label, number as _number, scorer_label as _scorer
from shareval.platform.labels import interval_bound, value_with_interval
from shareval.platform.labels import state_label as _state, value as _value

register = template.Library()
# html=False: raw HTML in a description is shown as text, never rendered (descriptions
# come from bundles that organizers upload); links only with safe schemes (markdown-it's
# default validateLink refuses javascript:, vbscript:, file: and most data: URLs).
_md = MarkdownIt("commonmark", {"html": False, "linkify": False})


@register.filter
def label(key):
    return _label(key)


@register.filter
def state_label(state):
    return _state(state)


@register.filter
def scorer_label(version):
    return _scorer(version)


@register.filter
def number(v, digits=4):
    return _number(v, int(digits))


@register.filter
def with_intervals(metrics: dict) -> list[tuple[str, str]]:
    """(key, text) of each metric; an estimate's interval bounds in its own text
    ('0.33 [0.26, 0.40]'), not rows of their own."""
    return [(k, value_with_interval(k, metrics)) for k in metrics
            if not interval_bound(k, metrics)]


@register.filter
def value(v, key):
    """A metric or count named ``key`` as shown (``{{ v|value:k }}``): counts whole."""
    return _value(key, v)


@register.filter
def when(value, fmt="%Y-%m-%d %H:%M:%S"):
    """A datetime in the current time zone as ``fmt`` (strftime); Django's ``date``
    filter costs about ten times more, which shows on lists of hundreds of runs."""
    if not value:
        return ""
    return timezone.localtime(value).strftime(fmt)


@register.filter
def zoned(value, fmt="%Y-%m-%d %H:%M"):
    """An aware datetime as ``fmt`` in its own zone (the caller converted it, e.g. to
    the competition's zone), not the server's."""
    return value.strftime(fmt) if value else ""


@register.filter
def markdown(text):
    return mark_safe(_md.render(text or ""))


RESULTS = {"hidden": "hidden until the organizers release them",
           "top": "top-level scores released", "detailed": "detailed results released"}


@register.filter
def results_label(level):
    return RESULTS.get(str(level), str(level))
