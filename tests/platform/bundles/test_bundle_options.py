"""A task option's value is checked when the bundle loads, by the task's own check:
the organizer sees the bundle file, the line, the task entry and the option, instead
of participants seeing "the scorer rejected the file" at the first submission."""
from __future__ import annotations

import pytest
import yaml

from shareval.formats.errors import InvalidInput
from shareval.platform.bundles.loader import read_bundle

from ..factories import make_bundle


def _with_task(root, task, options):
    b = yaml.safe_load((root / "bundle.yaml").read_text())
    b["tasks"].append({"slug": "extra", "task": task, "options": options})
    (root / "bundle.yaml").write_text(yaml.safe_dump(b, sort_keys=False))


@pytest.mark.parametrize("task, options, field, message", [
    ("trec", {"score_precision": "quad"}, "score_precision",
     "must be float or double, not 'quad'"),
    ("rcc-mentions", {"jaccard": 2}, "jaccard", "must be between 0 and 1, not 2"),
    ("rcc-mentions", {"cleaning": "ascii"}, "cleaning",
     "unknown cleaning 'ascii' (use one of kaggle, unicode)"),
    ("rcc-fields-methods", {"top": "ten"}, "top", "must be an integer, not 'ten'"),
    ("trec", {"measures": "map,bogus@3"}, "measures", "unknown measure 'bogus@3'"),
    ("trec", {"exclude_empty": True, "include_empty": True}, "exclude_empty",
     "contradicts include_empty; give one of them"),
])
def test_a_refused_option_value_is_a_bundle_problem(tmp_path, task, options, field, message):
    root = make_bundle(tmp_path / "b")
    _with_task(root, task, options)
    with pytest.raises(InvalidInput) as e:
        read_bundle(root)
    bad = [p for p in e.value.problems if p.field.endswith(f"options.{field}")]
    assert len(bad) == 1, e.value.render()
    p = bad[0]
    assert p.file.endswith("bundle.yaml") and p.line and p.field.startswith("tasks[1].")
    assert p.message.startswith(message), p.message


def test_allowed_values_load(tmp_path):
    root = make_bundle(tmp_path / "b")
    _with_task(root, "trec", {"score_precision": "double", "measures": "map,ndcg@10"})
    read_bundle(root)
