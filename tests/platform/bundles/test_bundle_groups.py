"""bundle.yaml ``groups:`` per phase: every mistake reported with its line, reloading
updates the groups in place, a competition archive carries them, and a baseline in a
contrastive-only dataset is loaded contrastive."""
from __future__ import annotations

import pytest
import yaml

from shareval.formats.errors import InvalidInput
from shareval.platform.bundles.loader import load_bundle, read_bundle
from shareval.platform.competitions.models import Quota, RunGroup

from ..factories import make_bundle

GROUP = {"slug": "lang-1a", "title": "Language 1A", "datasets": ["eval", "eval-clir"],
         "quotas": [{"limit": 5, "window": "phase"}],
         "primary": {"required": True, "from": ["eval"]}}


def bundle(tmp_path, groups, baseline_in_clir=False):
    root = make_bundle(tmp_path / "b", baseline=False)
    doc = yaml.safe_load((root / "bundle.yaml").read_text())
    doc["phases"][1]["datasets"].append({"slug": "eval-clir", "task": "labels",
                                         "reference": "gold-eval.tsv"})
    doc["phases"][1]["groups"] = groups
    if baseline_in_clir:
        doc["baselines"] = [{"team": "Baseline", "phase": "eval", "dataset": ds,
                             "file": "baseline.tsv"} for ds in ("eval-clir", "eval")]
    (root / "bundle.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return root


def line_of(root, text: str, after: str = "groups:") -> int:
    lines = (root / "bundle.yaml").read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if after in ln)
    return next(i for i, ln in enumerate(lines) if i >= start and text in ln) + 1


def test_every_mistake_in_groups_is_reported_with_its_line(tmp_path):
    root = bundle(tmp_path, [
        {"slug": "a", "datasets": ["eval", "nope"], "colour": "red",
         "quotas": [{"limit": -1, "window": "fortnight"}],
         "primary": {"from": ["dev"], "needed": True}},
        {"slug": "b", "datasets": ["eval"]},
        {"slug": "c", "title": "C"}])
    with pytest.raises(InvalidInput) as e:
        read_bundle(root)
    got = {(p.line, p.field, p.message) for p in e.value.problems}
    a, q, pr = line_of(root, "slug: a"), line_of(root, "limit: -1"), line_of(root, "from:")
    b, c = line_of(root, "slug: b"), line_of(root, "slug: c")
    expected = [
        (a, "phases[1].groups[0].datasets", "'nope' is not a dataset of this phase"),
        (a, "phases[1].groups[0].colour", "unknown key"),
        (q, "phases[1].groups[0].quotas[0].limit", "a non-negative integer"),
        (q, "phases[1].groups[0].quotas[0].window", "week, rolling or phase"),
        (pr, "phases[1].groups[0].primary.from", "'dev' is not one of the group's datasets"),
        (pr, "phases[1].groups[0].primary.needed", "unknown key"),
        (b, "phases[1].groups[1].datasets", "eval is already in group 'a'"),
        (c, "phases[1].groups[2].datasets", "required"),
    ]
    for line, field, msg in expected:
        assert any(g[0] == line and g[1] == field and msg in g[2] for g in got), \
            (line, field, msg, sorted(got, key=str))
    assert len(e.value.problems) == len(expected), e.value.render()


def test_reloading_updates_groups_in_place_and_drops_removed_ones(db, tmp_path):
    root = bundle(tmp_path, [GROUP])
    comp, _ = load_bundle(root)
    g = RunGroup.objects.get(phase__competition=comp)
    assert (g.title, g.primary_required, g.dataset_slugs()) == \
        ("Language 1A", True, ["eval", "eval-clir"])
    assert [d.slug for d in g.primary_from.all()] == ["eval"]
    assert [q.describe() for q in g.quotas.all()] == \
        ["5 in this phase for Language 1A (eval, eval-clir)"]
    changed = dict(GROUP, title="Lang 1A", datasets=["eval-clir"],
                   quotas=[{"limit": 3, "window": "week"}], primary={"required": False})
    root = bundle(tmp_path / "2", [changed])
    load_bundle(root)
    g2 = RunGroup.objects.get(phase__competition=comp)
    assert g2.pk == g.pk
    assert (g2.title, g2.primary_required, g2.dataset_slugs()) == ("Lang 1A", False, ["eval-clir"])
    assert list(g2.primary_from.all()) == []
    assert [(q.limit, q.window) for q in g2.quotas.all()] == [(3, "week")]
    load_bundle(bundle(tmp_path / "3", []))
    assert not RunGroup.objects.filter(phase__competition=comp).exists()
    assert not Quota.objects.filter(group__isnull=False).exists()
    assert Quota.objects.filter(dataset__phase__competition=comp).count() == 2   # untouched


def test_a_baseline_without_primary_in_a_contrastive_only_dataset_loads_contrastive(db, tmp_path):
    from django.contrib.auth import get_user_model
    org = get_user_model().objects.create_user("org", password="x-pass-123")
    comp, made = load_bundle(bundle(tmp_path, [GROUP], baseline_in_clir=True), org)
    assert {(s.dataset.slug, s.kind) for s in made} == {("eval-clir", "contrastive"),
                                                        ("eval", "primary")}


def test_the_competition_archive_carries_groups(db, tmp_path):
    from .test_archive import roundtrip
    comp, _ = load_bundle(bundle(tmp_path, [GROUP]))
    new = roundtrip(comp, tmp_path)
    g = RunGroup.objects.get(phase__competition=new)
    assert (g.slug, g.title, g.primary_required, g.dataset_slugs()) == \
        ("lang-1a", "Language 1A", True, ["eval", "eval-clir"])
    assert [d.slug for d in g.primary_from.all()] == ["eval"]
    assert [(q.limit, q.window) for q in g.quotas.all()] == [(5, "phase")]
