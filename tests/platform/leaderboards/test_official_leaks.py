"""Attacks on the official tables (i37 security review): a phase's datasets may
release scores differently (``feedback: false`` beside a dataset with feedback),
and the tables of each must follow their own datasets' level."""
from __future__ import annotations

import yaml

from shareval.platform.bundles.loader import load_bundle
from shareval.platform.competitions.models import Dataset
from shareval.platform.submissions.queue import drain

from ..factories import make_world, submit


def _mixed_feedback_world(tmp_path):
    """The open dev phase with a second dataset ``dev-quiet`` that gives no feedback."""
    w = make_world(tmp_path)
    root = tmp_path / "bundle"
    doc = yaml.safe_load((root / "bundle.yaml").read_text())
    doc["phases"][0]["datasets"].append({"slug": "dev-quiet", "task": "labels",
                                         "reference": "gold-dev.tsv", "feedback": False})
    (root / "bundle.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    load_bundle(root, w["org"])
    w["ds"] = {d.slug: d for d in Dataset.objects.filter(phase__competition=w["comp"])}
    assert w["ds"]["dev-quiet"].feedback is False
    return w


def test_a_feedback_false_dataset_beside_one_with_feedback_shows_no_score(db, tmp_path,
                                                                             client):
    w = _mixed_feedback_world(tmp_path)
    submit(w, "alice", "Team A", "dev-quiet", 17, primary=True)     # 0.85
    drain()
    client.force_login(w["users"]["bob"])
    url = "/c/tiny/results/dev/"
    body = client.get(url).content.decode()
    assert "0.85" not in body
    for fmt in ("csv", "tex", "png", "pdf"):
        r = client.get(url + f"dev-quiet.{fmt}")
        assert r.status_code == 404 or b"0.85" not in r.content, fmt
    # the dataset with feedback still shows its table
    assert client.get(url + "dev.csv").status_code == 200
    client.force_login(w["org"])
    assert "0.85" in client.get(url + "dev-quiet.csv").content.decode()
