"""bundle.yaml ``boards:`` per phase (combined boards): every mistake reported with the
file, its line and field; a good declaration stored on the phase, replaced on reload,
and carried by the competition archive."""
from __future__ import annotations

import pytest
import yaml

from shareval.formats.errors import InvalidInput
from shareval.platform.bundles.loader import load_bundle, read_bundle
from shareval.platform.competitions.models import Phase

from ..factories import make_bundle

BOARD = {"slug": "both", "title": "Both packs", "datasets": ["eval", "eval-b"],
         "columns": [{"metric": "accuracy", "combine": "mean_rank", "label": "Mean rank"},
                     {"metric": "accuracy", "combine": "mean"}]}


def bundle(tmp_path, boards):
    root = make_bundle(tmp_path / "b", baseline=False)
    doc = yaml.safe_load((root / "bundle.yaml").read_text())
    doc["phases"][1]["datasets"].append({"slug": "eval-b", "task": "labels",
                                         "reference": "gold-eval.tsv"})
    doc["phases"][1]["boards"] = boards
    (root / "bundle.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return root


def line_of(root, text: str, after: str = "boards:") -> int:
    lines = (root / "bundle.yaml").read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if after in ln)
    return next(i for i, ln in enumerate(lines) if i >= start and text in ln) + 1


def test_every_mistake_in_boards_is_reported_with_file_line_and_field(tmp_path):
    root = bundle(tmp_path, [
        {"slug": "a", "datasets": ["eval", "nope"], "colour": "red",
         "columns": [{"metric": "accuracy", "combine": "median"},
                     {"combine": "mean", "label": "no metric"},
                     {"metric": "accuracy", "combine": "mean", "lower_is_better": "yes"}]},
        {"slug": "a", "datasets": ["eval"], "columns": []},
        {"slug": "c", "datasets": ["eval", "eval-b"],
         "columns": [{"metric": "f1_macro"}, {"metric": "accuracy", "combine": "mean"},
                     {"metric": "accuracy", "combine": "mean", "label": "again"}]},
        "just a name"])
    with pytest.raises(InvalidInput) as e:
        read_bundle(root)
    got = {(p.file, p.line, p.field, p.message) for p in e.value.problems}
    a, med = line_of(root, "slug: a"), line_of(root, "combine: median") - 1
    nometric, yes = line_of(root, "label: no metric") - 1, line_of(root, "lower_is_better:") - 2
    a2 = line_of(root, "slug: a", after="lower_is_better")
    f1 = line_of(root, "metric: f1_macro")
    again = line_of(root, "label: again") - 2
    phase_line = line_of(root, "title: Evaluation", after="phases:") - 1
    expected = [
        (a, "phases[1].boards[0].datasets", "'nope' is not a dataset of this phase"),
        (a, "phases[1].boards[0].colour", "unknown key"),
        (med, "phases[1].boards[0].columns[0].combine", "unknown combine 'median'; mean or "
                                                        "mean_rank"),
        (nometric, "phases[1].boards[0].columns[1].metric", "required"),
        (yes, "phases[1].boards[0].columns[2].lower_is_better", "true or false"),
        (a2, "phases[1].boards[1].slug", "two boards of this phase are called 'a'"),
        (a2, "phases[1].boards[1].datasets", "two or more dataset slugs"),
        (a2, "phases[1].boards[1].columns", "required"),
        (f1, "phases[1].boards[2].columns[0].combine", "required: mean or mean_rank"),
        (again, "phases[1].boards[2].columns[2]", "mean of accuracy is already a column"),
        (phase_line, "phases[1].boards[3]", "expected a mapping"),
    ]
    for line, field, msg in expected:
        assert any(g[0] == "bundle.yaml" and g[1] == line and g[2] == field and msg in g[3]
                   for g in got), (line, field, msg, sorted(got, key=str))
    assert len(e.value.problems) == len(expected), e.value.render()
    # the message a person reads names the file, the line and the field
    text = e.value.render()
    assert f"bundle.yaml:{med}" in text and "phases[1].boards[0].columns[0].combine" in text


def test_boards_must_be_a_list(tmp_path):
    root = bundle(tmp_path, {"slug": "x"})
    with pytest.raises(InvalidInput) as e:
        read_bundle(root)
    [p] = e.value.problems
    assert (p.file, p.field) == ("bundle.yaml", "phases[1].boards") and "a list" in p.message


def test_a_board_is_stored_on_its_phase_replaced_on_reload_and_archived(db, tmp_path):
    comp, _ = load_bundle(bundle(tmp_path, [BOARD]))
    phase = Phase.objects.get(competition=comp, slug="eval")
    assert phase.combined_boards == [{
        "slug": "both", "title": "Both packs", "datasets": ["eval", "eval-b"],
        "columns": [{"key": "mean_rank:accuracy", "metric": "accuracy", "combine": "mean_rank",
                     "label": "Mean rank", "lower_is_better": False},
                    {"key": "mean:accuracy", "metric": "accuracy", "combine": "mean",
                     "label": "mean accuracy", "lower_is_better": False}]}]
    assert Phase.objects.get(competition=comp, slug="dev").combined_boards == []
    stored = phase.combined_boards
    load_bundle(bundle(tmp_path / "2", []))
    phase.refresh_from_db()
    assert phase.combined_boards == []
    load_bundle(bundle(tmp_path / "3", [BOARD]))
    from .test_archive import roundtrip
    new = roundtrip(comp, tmp_path)           # a fresh database: the archive's phase
    assert Phase.objects.get(competition=new, slug="eval").combined_boards == stored
