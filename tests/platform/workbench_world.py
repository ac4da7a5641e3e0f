"""A small workbench world for the unit page's browser test (test_browser_workbench_unit.py),
written into a live server's database in one subprocess: made-up texts (an emoji before
the mentions, so code points and UTF-16 units differ; a long text of three pages), a
catalog with one family, the reference systems' suggestions, two annotators."""
from __future__ import annotations

SHORT = ("Intergenerational mobility in Germany \U0001F1E9\U0001F1EA\n\n"
         "We analyse data from the ALLBUS 2010 and compare them with the German "
         "Socio-Economic Panel (SOEP). Earlier waves of ALLBUS 2008 serve as a robustness "
         "check. The labour market indicators come from official statistics.\n\n"
         "Results are robust to the choice of weights and to the definition of class.")
FILLER = ("Social mobility research asks how strongly the position of parents shapes the "
          "chances of their children. ")
LONG_TAIL = "A later chapter draws on the SOEP again."
LONG = FILLER * 250 + "\n\n" + LONG_TAIL + "\n\n" + FILLER * 60
ENTRIES = [("allbus-2008", "ALLBUS 2008 German General Social Survey", "allbus"),
           ("allbus-2010", "ALLBUS 2010 German General Social Survey", "allbus"),
           ("soep", "German Socio-Economic Panel (SOEP)", ""),
           ("microcensus", "Microcensus labour market statistics", "")]
SENTENCE = "How satisfied are you with your life as a whole these days?"
VARIABLES = [("v-life", "Life satisfaction (0-10)"), ("v-health", "Satisfaction with health"),
             ("v-work", "Satisfaction with work")]


def at(text: str, words: str, nth: int = 0) -> tuple[int, int]:
    b = -1
    for _ in range(nth + 1):
        b = text.index(words, b + 1)
    return b, b + len(words)


BUILD = r'''
from shareval.platform import setup
setup()
from shareval.platform.server import migrate
migrate()
from django.contrib.auth import get_user_model
from shareval.platform.competitions.models import Competition
from shareval.platform.workbench import service
from shareval.platform.workbench.models import Entry, Suggestion, Unit
from tests.platform.workbench_world import *

User = get_user_model()
comp = Competition.objects.get(slug="tiny")
org = User.objects.get(username="org")
ann = [User.objects.get(username=n) for n in ("ann1", "ann2")]


def project(slug, title, suggestions):
    pr = service.create_project(comp, slug, title, "rcc-publications", org, per_unit=2,
                                suggestions=suggestions,
                                codebook="## Mentions\n\nMark every **specific** name of a "
                                         "data set (not generic words such as *data*). "
                                         "Link each to its catalog entry.")
    for key, title, fam in ENTRIES:
        Entry.objects.create(project=pr, key=key, title=title, family=fam, text=title)
    u1 = Unit.objects.create(project=pr, key="pub-1", title="Intergenerational mobility",
                             text=SHORT, position=0,
                             meta={"cited": ["allbus-2010", "allbus-2008", "soep"]})
    u2 = Unit.objects.create(project=pr, key="pub-2", title="Social mobility, a long review",
                             text=LONG, position=1, meta={"cited": ["soep"]})
    for words, target, score in (("ALLBUS 2010", "allbus-2010", 0.93),
                                 ("German Socio-Economic Panel (SOEP)", "soep", 0.81),
                                 ("labour market indicators", "microcensus", 0.22)):
        b, e = at(SHORT, words)
        Suggestion.objects.create(unit=u1, begin=b, end=e, label="dataset", target=target,
                                  score=score, source="rcc-linker")
    b, e = at(LONG, "SOEP")
    Suggestion.objects.create(unit=u2, begin=b, end=e, label="dataset", target="soep",
                              score=0.88, source="rcc-linker")
    service.assign(pr, ann, per_unit=2, by=org)
    return pr


project("mentions", "Data set mentions", True)
project("mentions-plain", "Data set mentions (no suggestions)", False)
sv = service.create_project(comp, "variables", "Survey variables", "svident", org)
for key, title in VARIABLES:
    Entry.objects.create(project=sv, key=key, title=title, text=title)
u = Unit.objects.create(project=sv, key="s-1", title="Sentence 1", text=SENTENCE)
for key, score in (("v-life", 0.91), ("v-health", 0.35), ("v-work", 0.12)):
    Suggestion.objects.create(unit=u, kind="answer", label="variable", target=key,
                              score=score, source="svident")
service.assign(sv, ann[:1], per_unit=1, by=org)
'''
