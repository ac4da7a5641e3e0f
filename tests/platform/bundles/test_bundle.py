"""Competition bundles: every problem listed with its line, hostile archives refused,
reloading updates references (and so what re-scoring does)."""
from __future__ import annotations

import io
import tarfile

import pytest
import yaml

from shareval.formats.errors import InvalidInput
from shareval.platform.bundles.loader import load_bundle, load_bundle_archive, read_bundle
from shareval.platform.competitions.models import Competition
from shareval.platform.submissions import queue, service
from shareval.platform.submissions.models import Score

from ..factories import Upload, make_bundle, run_with_accuracy


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


def test_an_option_value_outside_its_choices_is_a_bundle_problem(tmp_path):
    """A task option declared with choices (svident-disambiguation's ties) is checked
    when the bundle loads, with its line, not when the first run is scored."""
    root = make_bundle(tmp_path / "b")
    b = yaml.safe_load((root / "bundle.yaml").read_text())
    b["tasks"].append({"slug": "sv2", "task": "svident-disambiguation",
                       "options": {"ties": "random"}})
    (root / "bundle.yaml").write_text(yaml.safe_dump(b, sort_keys=False))
    with pytest.raises(InvalidInput) as e:
        read_bundle(root)
    bad = [p for p in e.value.problems if p.field.endswith("options.ties")]
    assert len(bad) == 1 and bad[0].line, e.value.render()
    assert bad[0].message == "must be one of official, id, not 'random'"
    b["tasks"][-1]["options"] = {"ties": "id"}
    (root / "bundle.yaml").write_text(yaml.safe_dump(b, sort_keys=False))
    read_bundle(root)                          # an allowed value: the bundle loads


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


def _edit(root, change):
    b = yaml.safe_load((root / "bundle.yaml").read_text())
    change(b)
    (root / "bundle.yaml").write_text(yaml.safe_dump(b, sort_keys=False))
    return root


@pytest.mark.parametrize("where,bad", [
    (lambda b: b["phases"][0]["datasets"][0], "../../../../canary"),
    (lambda b: b["phases"][0]["datasets"][0], ".."),
    (lambda b: b["phases"][1], "../eval"),
    (lambda b: b["tasks"][0], "Labels"),
    (lambda b: b, "-tiny"),
    (lambda b: b, "a" * 51),
])
def test_every_slug_is_validated_and_nothing_is_written_outside_home(db, tmp_path, where, bad):
    from django.conf import settings
    root = make_bundle(tmp_path / "b")

    def change(b):
        where(b)["slug"] = bad
        for ph in b["phases"]:
            for d in ph["datasets"]:
                if bad == "Labels":
                    d["task"] = bad
    _edit(root, change)
    with pytest.raises(InvalidInput) as e:
        load_bundle(root)
    assert ".slug" in e.value.render() and "is not a slug" in e.value.render()
    assert all(p.line for p in e.value.problems)
    # where ../../../../canary from PRIVATE_DIR/tiny/dev/ or PUBLIC_DIR/tiny/dev/ would land
    assert not (settings.HOME.parent / "canary").exists()
    assert not (settings.HOME / "canary").exists()
    assert not Competition.objects.exists()


def test_a_staff_user_cannot_take_over_anothers_competition(world, tmp_path, client):
    from django.contrib.auth import get_user_model
    comp, org = world["comp"], world["org"]
    ref = world["ds"]["dev"].reference_file
    ref_before = ref.read_bytes()
    mallory = get_user_model().objects.create_user("mallory", password="m-pass-123",
                                                   is_staff=True)
    root = make_bundle(tmp_path / "evil", slug=comp.slug, baseline=False)
    (root / "gold-dev.tsv").write_text(run_with_accuracy(0))      # a different reference
    _edit(root, lambda b: b.update(title="Taken", organizers=["mallory"]))
    with pytest.raises(InvalidInput) as e:
        load_bundle(root, mallory)
    assert "not one of its organizers" in e.value.render()
    # through the organizer page too
    archive = tmp_path / "evil.tgz"
    with tarfile.open(archive, "w:gz") as t:
        t.add(root, arcname="evil")
    client.force_login(mallory)
    with open(archive, "rb") as fh:
        r = client.post("/organize/new/", {"bundle": fh})
    assert r.status_code == 200 and b"not one of its organizers" in r.content
    comp.refresh_from_db()
    assert comp.title != "Taken" and list(comp.organizers.all()) == [org]
    assert ref.read_bytes() == ref_before
    assert client.get(f"/c/{comp.slug}/organize/").status_code == 404
    # its organizer (and the operator's command line, organizer=None) may still update it
    load_bundle(_edit(root, lambda b: b.update(organizers=[])), org)
    comp.refresh_from_db()
    assert comp.title == "Taken" and list(comp.organizers.all()) == [org]


def test_a_symlink_in_home_cannot_make_the_loader_write_or_delete_outside(db, tmp_path):
    from django.conf import settings

    from shareval.platform.bundles.loader import inside
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious")
    private = settings.PRIVATE_DIR
    private.mkdir(parents=True, exist_ok=True)
    (private / "linked").symlink_to(victim, target_is_directory=True)
    try:
        with pytest.raises(InvalidInput) as e:
            load_bundle(make_bundle(tmp_path / "b", slug="linked", baseline=False))
        assert "leaves its folder" in e.value.render()
        assert (victim / "keep.txt").read_text() == "precious"
        assert [p.name for p in victim.iterdir()] == ["keep.txt"]
    finally:
        (private / "linked").unlink()
    assert not Competition.objects.exists()
    for rel in ("..", ".", "../x", "a/../../x", "/etc/passwd"):
        with pytest.raises(InvalidInput):
            inside(private, rel)
    assert inside(private, "a/b.tsv") == private.resolve() / "a" / "b.tsv"


def test_team_approval_is_read_from_the_bundle(db, tmp_path):
    root = make_bundle(tmp_path / "b", baseline=False)
    comp, _ = load_bundle(root)
    assert comp.team_approval is False
    comp, _ = load_bundle(_edit(root, lambda b: b.update(team_approval=True)))
    assert comp.team_approval is True
    with pytest.raises(InvalidInput) as e:
        read_bundle(_edit(root, lambda b: b.update(team_approval="yes")))
    assert "bundle.team_approval" in e.value.render()
