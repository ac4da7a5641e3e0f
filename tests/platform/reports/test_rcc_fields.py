"""The report's RCC research fields and methods: each team's value distribution, the
overlap between teams and a ranking by the majority rule, by distribution overlap and
by the judges' phase-1 Borda points, from the stored scores of runs scored by the
real worker; and the figure of the distributions side by side.

Hand-worked world, dataset "methods" (records per value, 4 participants + a baseline;
values normalised by the scorer, so " SURVEY " is "survey"):

    Team A  survey 3, regression 1                       (primary; a later run differs)
    Team B  survey 2, interview 2                        (no primary: latest run)
    Team C  survey 1, regression 1, interview 1, case study 1      (primary)
    Team D  case study 3, ethnography 1                  (no primary)
    Baseline  survey 1, ethnography 1                    (a baseline: does not vote)

Voters A-D; each team's other voters are 3, so a majority value has >= 2 of them:
    A: survey (B, C) yes, regression (C) no           -> 3/4
    B: survey (A, C) yes, interview (C) no            -> 2/4
    C: survey (A, B) yes (1 record), the rest 1 each  -> 1/4
    D: case study (C) no, ethnography none            -> 0
    Baseline: 4 other voters, needs >= 3: survey (A, B, C) yes, ethnography no -> 1/2
Ranks: A 1, Baseline 2, B 2 (equal 0.5, by name), C 4, D 5.
"""
from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest
import yaml

from ..factories import Upload

METHODS = {
    "Team A": ["survey"] * 3 + ["regression"],
    "Team B": ["survey"] * 2 + ["interview"] * 2,
    "Team C": ["survey", "regression", "interview", "case study"],
    "Team D": ["case study"] * 3 + ["ethnography"],
    "Baseline": [" SURVEY ", "Ethnography"],
}
PRIMARY = {"Team A", "Team C"}
PARTICIPANTS = ["Team A", "Team B", "Team C", "Team D"]


def values_file(values: list[str], key: str = "method") -> str:
    return json.dumps([{"publication_id": str(k), key: v} for k, v in enumerate(values)])


@pytest.fixture
def phase(db, tmp_path):
    from django.contrib.auth import get_user_model

    from shareval.platform.bundles.loader import load_bundle
    from shareval.platform.competitions.models import Membership, Team
    from shareval.platform.submissions import queue, service
    root = tmp_path / "b"
    root.mkdir()
    now = dt.datetime.now(dt.timezone.utc)
    iso = lambda t: t.replace(microsecond=0).isoformat()       # noqa: E731
    (root / "bundle.yaml").write_text(yaml.safe_dump({
        "slug": "rcc-fm", "title": "RCC fields and methods",
        "tasks": [{"slug": "fm", "task": "rcc-fields-methods"}],
        "phases": [{"slug": "p1", "title": "Phase 1", "start": iso(now - dt.timedelta(days=1)),
                    "end": iso(now + dt.timedelta(days=9)), "leaderboard": "public",
                    "datasets": [{"slug": "methods", "task": "fm"},
                                 {"slug": "fields", "task": "fm"},
                                 {"slug": "empty", "task": "fm"}]}]}))
    User = get_user_model()
    org = User.objects.create_user("org", password="org-pass-123", is_staff=True)
    comp, _ = load_bundle(root, org)
    ph = comp.phases.get()
    ds = {d.slug: d for d in ph.datasets.all()}
    users, teams = {}, {}
    for name in METHODS:
        u = User.objects.create_user(name.split()[-1].lower(), password="x-pass-123")
        t = Team.objects.create(competition=comp, name=name, lead=u,
                                is_baseline=name == "Baseline")
        Membership.objects.create(team=t, user=u, status=Membership.APPROVED)
        users[name], teams[name] = u, t

    def submit(team, dataset, text, primary=None):
        who = org if team == "Baseline" else users[team]     # organizers submit baselines
        return service.submit(who, teams[team], ds[dataset], Upload("run.json", text),
                              primary=primary)
    submit("Team B", "methods", values_file(["earlier"]))      # B's latest run counts
    for name, values in METHODS.items():
        submit(name, "methods", values_file(values), primary=name in PRIMARY)
    submit("Team A", "methods", values_file(["later, not primary"]))   # A's primary counts
    # fields: A gives fields, B gives methods (another kind)
    submit("Team A", "fields", values_file(["sociology", "economics"], "research_field"))
    submit("Team B", "fields", values_file(["survey"]))
    assert queue.drain() == 9
    # "empty": C's run is not scored yet (queued), so no team is compared
    submit("Team C", "empty", values_file(["survey"]))
    return {"phase": ph, "ds": ds, "org": org, "users": users, "teams": teams}


def by_slug(phase, rule="majority"):
    from shareval.platform.reports.rcc_fields import fields_methods
    return {r["dataset"]: r for r in fields_methods(phase, rule)}


def test_distributions_support_and_overlap_by_hand(phase):
    m = by_slug(phase["phase"])["methods"]
    assert m["kind"] == "methods" and m["rule"] == "majority"
    assert m["teams"] == ["Baseline", "Team A", "Team B", "Team C", "Team D"]
    d = m["distributions"]
    assert d["Team A"] == {"survey": 0.75, "regression": 0.25}
    assert list(d["Team A"]) == ["survey", "regression"]            # most frequent first
    assert d["Baseline"] == {"ethnography": 0.5, "survey": 0.5}     # normalised values
    assert d["Team C"] == {v: 0.25 for v in ("case study", "interview", "regression", "survey")}
    # the share of voting teams (A-D, not the baseline) giving each value
    assert m["support"] == {"survey": 0.75, "case study": 0.5, "interview": 0.5,
                            "regression": 0.5, "ethnography": 0.25}
    o = m["overlap"]
    assert len(o) == 5 * 4                                    # every ordered pair
    assert o[("Team A", "Team B")] == {"value_jaccard": pytest.approx(1 / 3),
                                       "weighted_overlap": pytest.approx(0.5)}
    assert o[("Team A", "Team C")] == {"value_jaccard": 0.5, "weighted_overlap": 0.5}
    assert o[("Team C", "Team D")] == {"value_jaccard": pytest.approx(0.2),
                                       "weighted_overlap": pytest.approx(0.25)}
    assert o[("Team A", "Team D")] == {"value_jaccard": 0.0, "weighted_overlap": 0.0}
    assert o[("Team B", "Baseline")] == o[("Baseline", "Team B")]
    # independent: weighted overlap is 1 minus the total variation distance
    for (a, b), v in o.items():
        keys = sorted(set(d[a]) | set(d[b]))
        p = np.array([d[a].get(k, 0) for k in keys])
        q = np.array([d[b].get(k, 0) for k in keys])
        assert v["weighted_overlap"] == pytest.approx(1 - 0.5 * np.abs(p - q).sum())
        assert v["value_jaccard"] == pytest.approx(
            len(set(d[a]) & set(d[b])) / len(set(d[a]) | set(d[b])))


def test_majority_ranking_by_hand(phase):
    m = by_slug(phase["phase"])["methods"]
    assert [(r["team"], r["score"], r["rank"]) for r in m["ranking"]] == [
        ("Team A", 0.75, 1), ("Baseline", 0.5, 2), ("Team B", 0.5, 2),
        ("Team C", 0.25, 4), ("Team D", 0.0, 5)]
    assert [r["team"] for r in m["ranking"] if r["baseline"]] == ["Baseline"]
    assert "more than half of the other" in m["rule_text"]


def test_majority_score_against_a_per_record_count():
    """The rule written record by record, apart from the module's per-value sum."""
    from collections import Counter

    from shareval.platform.reports.rcc_fields import majority_score
    teams = {t: [" ".join(v.split()).casefold() for v in vs] for t, vs in METHODS.items()}
    voters = ["Team A", "Team B", "Team C", "Team D"]
    for t, recs in teams.items():
        others = [set(teams[u]) for u in voters if u != t]
        agreeing = [r for r in recs if 2 * sum(r in o for o in others) > len(others)]
        assert majority_score(Counter(recs), len(recs), others) == len(agreeing) / len(recs)


def test_the_overlap_rule_by_hand(phase):
    m = by_slug(phase["phase"], "overlap")["methods"]
    # mean weighted overlap with the other voters (A-D):
    # A (.5+.5+0)/3, B (.5+.5+0)/3, C (.5+.5+.25)/3, D (0+0+.25)/3, Baseline (.5+.5+.25+.25)/4
    assert [(r["team"], r["rank"]) for r in m["ranking"]] == [
        ("Team C", 1), ("Baseline", 2), ("Team A", 3), ("Team B", 3), ("Team D", 5)]
    scores = {r["team"]: r["score"] for r in m["ranking"]}
    assert scores == pytest.approx({"Team C": 1.25 / 3, "Baseline": 0.375, "Team A": 1 / 3,
                                    "Team B": 1 / 3, "Team D": 0.25 / 3})


def test_notes_name_every_gap(phase):
    r = by_slug(phase["phase"])
    m, f, e = r["methods"], r["fields"], r["empty"]
    assert "Team B: no primary run; its latest scored run is compared (as on the board)" \
        in m["notes"]
    assert any(n.startswith("Team D: no primary run") for n in m["notes"])
    assert not any(n.startswith(("Team A", "Team C")) for n in m["notes"])   # primaries
    # B's latest run, not its earlier one; A's primary, not its later run
    assert "earlier" not in m["distributions"]["Team B"]
    assert "later, not primary" not in m["distributions"]["Team A"]
    # fields: B gave methods; A alone is left: nothing compared or ranked
    assert f["kind"] == "fields" and f["teams"] == ["Team A", "Team B"]
    assert any("Team B (methods) left out" in n for n in f["notes"])
    assert any("only one team (Team A) has fields" in n for n in f["notes"])
    assert f["overlap"] == {} and f["ranking"] == []
    assert f["distributions"]["Team A"] == {"economics": 0.5, "sociology": 0.5}
    # empty: C's run is queued
    assert e["teams"] == [] and e["ranking"] == [] and e["distributions"] == {}
    assert "Team C: nothing to compare (no run is scored)" in e["notes"]
    assert any("no team has a scored run" in n for n in e["notes"])


def test_a_cut_value_list_is_named(phase):
    from shareval.platform.submissions.models import Score
    s = Score.objects.get(submission__team__name="Team A", submission__dataset__slug="methods",
                          submission__kind="primary")
    s.result["breakdowns"]["value_counts"].pop("regression")    # as with the option top=1
    Score.objects.filter(pk=s.pk).update(result=s.result)
    m = by_slug(phase["phase"])["methods"]
    assert any(n.startswith("Team A: the stored score lists 1 values covering 3 of 4")
               for n in m["notes"])
    assert m["distributions"]["Team A"] == {"survey": 0.75}     # shares of all 4 records


def test_judges_without_a_study_rank_nothing_and_say_why(phase):
    m = by_slug(phase["phase"], "judges")["methods"]
    assert m["ranking"] == [] and m["rule"] == "judges"
    assert any("no annotation study" in n for n in m["notes"])


def _study(phase, slug):
    from shareval.platform.annotation.models import Publication, Study
    st = Study.objects.create(dataset=phase["ds"]["methods"], slug=slug, title=slug.title(),
                              designer=phase["org"], teams=sorted(PARTICIPANTS))
    pubs = [Publication.objects.create(study=st, publication_id=f"p{k}",
                                       purpose=Publication.QUALITATIVE, topic="Health",
                                       outputs={t: [] for t in PARTICIPANTS}) for k in (1, 2)]
    return st, pubs


def test_judges_borda_of_the_phase1_rankings(phase):
    from django.contrib.auth import get_user_model

    from shareval.platform.annotation.models import Ranking
    _, empty = _study(phase, "unranked")
    m = by_slug(phase["phase"], "judges")["methods"]
    assert m["ranking"] == [] and any("no judge has ranked" in n for n in m["notes"])
    _, pubs = _study(phase, "ranked")
    User = get_user_model()
    j1, j2 = (User.objects.create_user(n, password=f"{n}-pass-123") for n in ("j1", "j2"))
    # pub 1: j1 A B C D, j2 B A C D; pub 2: j1 C A B D (the baseline nobody ranked)
    # Borda (teams below): A 3+2+2 = 7, B 2+3+1 = 6, C 1+1+3 = 5, D 0
    for pub, judge, order in ((pubs[0], j1, "ABCD"), (pubs[0], j2, "BACD"),
                              (pubs[1], j1, "CABD")):
        Ranking.objects.create(publication=pub, judge=judge,
                               order=[f"Team {x}" for x in order])
    r = by_slug(phase["phase"], "judges")
    m = r["methods"]
    assert [(x["team"], x["score"], x["rank"]) for x in m["ranking"]] == [
        ("Team A", 7.0, 1), ("Team B", 6.0, 2), ("Team C", 5.0, 3), ("Team D", 0.0, 4),
        ("Baseline", None, None)]
    assert "Baseline: in no judge's ranking: no judges' score" in m["notes"]
    assert "Borda points of 3 phase-1 rankings from Ranked (3 rankings)" in m["notes"]
    assert r["fields"]["ranking"] == []                  # one team of fields: nothing to rank
    from shareval.assessment.rcc_phase2 import borda     # the library's Borda agrees
    assert borda([list("ABCD"), list("BACD"), list("CABD")])[1] == {
        "A": 7.0, "B": 6.0, "C": 5.0, "D": 0.0}


def test_an_unknown_rule_is_refused(phase):
    with pytest.raises(ValueError, match="unknown rule 'votes': choose one of majority"):
        by_slug(phase["phase"], "votes")


# the figure ----------------------------------------------------------------------------

LONG = ("structural equation modelling with latent growth curves and "
        "multilevel random effects across panel waves")


def test_the_figure_renders_png_and_pdf_with_teams_side_by_side(tmp_path):
    import io

    from shareval.overview.figures_values import plot_value_distributions, value_label
    dists = {"Team A": {"survey": 0.75, "regression": 0.25},
             "Team B": {"survey": 0.5, LONG: 0.5},
             "Team C": {"case study": 1.0}}
    fig = plot_value_distributions(dists, "Methods: phase 1", top=3)
    ax = fig.axes[0]
    # mean shares: survey 1.25/3, LONG .5/3, regression .25/3 (case study 1/3 > LONG)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["survey", "case study", value_label(LONG)]
    assert len(ax.patches) == 3 * 3                       # one bar per team and value
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list(dists)
    assert ax.get_title() == "Methods: phase 1"
    for fmt, magic in (("png", b"\x89PNG"), ("pdf", b"%PDF")):
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt)
        assert buf.getvalue().startswith(magic) and len(buf.getvalue()) > 1000


def test_long_labels_are_wrapped_and_cut_readably():
    from shareval.overview.figures_values import value_label
    label = value_label(LONG)
    lines = label.split("\n")
    assert len(lines) == 2 and all(len(x) <= 28 for x in lines)
    assert lines[0] == "structural equation" and lines[1].endswith("…")
    assert value_label("survey") == "survey"
    assert value_label("x" * 40) == "x" * 28 + "\n" + "x" * 12    # one word broken
    assert value_label("   ") == "(empty)"


def test_an_empty_figure_says_so():
    from shareval.overview.figures_values import plot_value_distributions
    fig = plot_value_distributions({}, "Nothing")
    assert [t.get_text() for t in fig.axes[0].texts] == ["no values"]
