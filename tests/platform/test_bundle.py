"""Competition bundles: every problem listed with its line, hostile archives refused,
reloading updates references (and so what re-scoring does)."""
from __future__ import annotations

import io
import tarfile

import pytest
import yaml

from shareval.formats.errors import InvalidInput
from shareval.platform.competitions.bundle import load_bundle, load_bundle_archive, read_bundle
from shareval.platform.competitions.models import Competition
from shareval.platform.submissions import queue, service
from shareval.platform.submissions.models import Score

from .conftest import Upload, make_bundle, run_with_accuracy


def test_bundle_problems_are_all_listed_with_lines(tmp_path):
    root = make_bundle(tmp_path / "b")
    b = yaml.safe_load((root / "bundle.yaml").read_text())
    b["tasks"].append({"slug": "x", "task": "no-such-task"})
    b["phases"][0]["datasets"][0]["reference"] = "missing.tsv"
    b["phases"][1]["datasets"][0]["quotas"] = [{"limit": -1, "window": "fortnight"}]
    b["phases"][1]["end"] = b["phases"][1]["start"]
    b["tasks"][0]["options"] = {"bogus": 1}
    (root / "bundle.yaml").write_text(yaml.safe_dump(b, sort_keys=False))
    with pytest.raises(InvalidInput) as e:
        read_bundle(root)
    text = e.value.render()
    for needle in ("no-such-task", "missing.tsv not found", "quotas[0].limit",
                   "quotas[0].window", "must be after start", "options.bogus"):
        assert needle in text, text
    assert all(p.line for p in e.value.problems), text      # each names its line


def test_reference_is_checked_when_loading(tmp_path):
    root = make_bundle(tmp_path / "b")
    (root / "gold-dev.tsv").write_text("item\tlabel\na\tx\na\ty\n")
    with pytest.raises(InvalidInput) as e:
        read_bundle(root)
    assert "does not load as a classification reference" in e.value.render()


def test_paths_outside_the_bundle_are_refused(tmp_path):
    root = make_bundle(tmp_path / "b")
    (tmp_path / "secret.tsv").write_text("item\tlabel\n")
    b = yaml.safe_load((root / "bundle.yaml").read_text())
    b["phases"][0]["datasets"][0]["public"] = ["../secret.tsv"]
    (root / "bundle.yaml").write_text(yaml.safe_dump(b))
    with pytest.raises(InvalidInput) as e:
        read_bundle(root)
    assert "outside the bundle" in e.value.render()


def _tgz(members: dict[str, bytes], links=()) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        for name, target in links:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            t.addfile(info)
    return buf.getvalue()


@pytest.mark.parametrize("members,links", [
    ({"../evil/bundle.yaml": b"slug: x"}, ()),
    ({"/abs/bundle.yaml": b"slug: x"}, ()),
    ({"b/bundle.yaml": b"slug: x"}, [("b/ref.tsv", "/etc/passwd")]),
])
def test_hostile_bundle_archives_are_refused(db, tmp_path, members, links):
    p = tmp_path / "b.tgz"
    p.write_bytes(_tgz(members, links))
    with pytest.raises(InvalidInput):
        load_bundle_archive(p)
    assert not (tmp_path.parent / "evil").exists()
    assert not Competition.objects.exists()


def test_reload_with_new_reference_lets_rescoring_keep_both_versions(world, tmp_path):
    alice, team, ds = world["users"]["alice"], world["teams"]["Team A"], world["ds"]["dev"]
    sub = service.submit(alice, team, ds, Upload("a.tsv", run_with_accuracy(14)))
    queue.drain()
    root = make_bundle(tmp_path / "b2")
    # the organizers fix one gold label
    lines = (root / "gold-dev.tsv").read_text().splitlines()
    item, label = lines[1].split("\t")
    lines[1] = f"{item}\t{'neg' if label != 'neg' else 'pos'}"
    (root / "gold-dev.tsv").write_text("\n".join(lines) + "\n")
    b = yaml.safe_load((root / "bundle.yaml").read_text())
    b.pop("baselines")
    (root / "bundle.yaml").write_text(yaml.safe_dump(b))
    load_bundle(root, world["org"])
    ds.refresh_from_db()
    assert service.rescore(ds.task) == 2          # alice's run and the baseline
    queue.drain()
    scores = list(Score.objects.filter(submission=sub).order_by("created"))
    assert len(scores) == 2 and scores[0].reference_digest != scores[1].reference_digest
    assert [s.current for s in scores] == [False, True]
    assert scores[0].result["metrics"]["accuracy"] == pytest.approx(0.7)
    assert scores[1].result["metrics"]["accuracy"] == pytest.approx(0.65)
