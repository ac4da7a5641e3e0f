"""A competition archive reaches only its own competition's files: an organizer's
crafted archive that names another competition's blind gold, hidden code input,
runs or plots, or carries a file into its folders, is refused with the field or
member named, and the other competition's files stay as they were and out of
every export."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model

from shareval.formats.errors import InvalidInput
from shareval.platform.bundles.archive import export_competition, import_competition
from shareval.platform.bundles.loader import load_bundle
from shareval.platform.competitions.models import Competition, Dataset

from ..factories import Upload, make_bundle, run_with_accuracy
from .test_archive import _doc, _write
from ..coderuns.test_coderuns import code_bundle


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def victim_and_attacker(db, tmp_path):
    """Competition ``cb`` (a blind evaluation phase, a code dataset with a hidden input,
    an uploaded run) and organizer mallory's own competition ``evil``, exported and
    gone from the server, so its archive can be imported again."""
    from shareval.platform.competitions.models import Membership, Team
    from shareval.platform.submissions.queue import drain
    from shareval.platform.submissions.service import submit
    User = get_user_model()
    org = User.objects.create_user("org", password="org-pass-123", is_staff=True)
    alice = User.objects.create_user("alice", password="alice-pass-123")
    cb, _ = load_bundle(code_bundle(tmp_path / "cb"), org)
    team = Team.objects.create(competition=cb, name="Team A", lead=alice)
    Membership.objects.create(team=team, user=alice, status=Membership.APPROVED)
    run = submit(alice, team, cb.phases.get(slug="dev").datasets.get(slug="dev"),
                 Upload("alice.tsv", run_with_accuracy(12)))
    mallory = User.objects.create_user("mallory", password="mallory-pass-1", is_staff=True)
    evil, _ = load_bundle(make_bundle(tmp_path / "evil", slug="evil"), mallory)
    drain()                                     # evil's baseline is scored (and plotted)
    archive = tmp_path / "evil.tgz"
    export_competition(evil, archive)
    evil.delete()
    gold = cb.phases.get(slug="eval").datasets.get(slug="eval")
    hidden = cb.phases.get(slug="dev").datasets.get(slug="dev-code").code
    return {"cb": cb, "archive": archive, "gold": gold.reference_path,
            "hidden": hidden.input_path, "run": run, "tmp": tmp_path}


def _attacks(v) -> dict:
    """name -> (change to the document, files to add, expected problem)."""
    gold, hidden = v["gold"], v["hidden"]
    code_dataset = {"phase": "dev", "dataset": "dev", "mode": "code", "input_path": hidden,
                    "input_digest": "x", "sample_input_path": "", "sample_reference_path": "",
                    "sample_digest": "", "limits": {}, "max_limits": {}}

    def reference(doc):
        doc["phases"][1]["datasets"][0]["reference_path"] = gold

    def code_input(doc):
        doc["code"]["datasets"] = [code_dataset]

    def public_file(doc):
        doc["phases"][0]["datasets"][0]["public_files"][0]["path"] = gold

    def plot(doc):
        doc["submissions"][0]["scores"][0]["plots"] = [f"../../private/{gold}"]

    def scorer(doc):
        doc["tasks"][0].update(task_name="program", options={
            "scorer": str(Path(settings.PRIVATE_DIR) / hidden)})

    def option(doc):
        doc["tasks"][0]["options"] = {"compare": str(Path(settings.PRIVATE_DIR) / gold)}

    def nothing(doc):
        pass
    where = "competition.json: "
    return {
        "blind gold as a reference": (reference, {}, f"{where}phases[1].datasets[0]."
                                      f"reference_path: {gold!r} is outside this competition's "
                                      f"own private folder evil/; nothing was imported"),
        "hidden input as a code input": (code_input, {}, f"{where}code.datasets[0].input_path: "
                                         f"{hidden!r} is outside this competition's own "
                                         f"private folder evil/"),
        "blind gold as a released file": (public_file, {}, f"{where}phases[0].datasets[0]."
                                          f"public_files[0].path: {gold!r} is outside this "
                                          f"competition's own public folder evil/"),
        "blind gold as a plot": (plot, {}, f"{where}submissions[0].scores[0].plots: "
                                 f"'../../private/{gold}' is not a plain file name"),
        "hidden input as a scoring program": (scorer, {}, f"{where}tasks[0].options.scorer: "
                                              f"'{Path(settings.PRIVATE_DIR) / hidden}' is "
                                              f"outside this competition's own private folder"),
        "blind gold as an option": (option, {}, f"{where}tasks[0].options.compare: not an "
                                    f"option of classification"),
        "a file planted in the hidden input": (nothing, {
            f"files/private/{hidden}/planted.txt": b"planted"},
            f"evil.tgz!files/private/{hidden}/planted.txt: member: not a file of competition "
            f"evil"),
        "a file planted among the uploads": (nothing, {
            f"files/uploads/{v['run'].stored_name}": b"planted"},
            f"evil.tgz!files/uploads/{v['run'].stored_name}: member: not a file of "
            f"competition evil"),
    }


def test_an_archive_naming_another_competitions_files_is_refused(victim_and_attacker):
    v = victim_and_attacker
    doc, files = _doc(v["archive"])
    before = {d: _tree(Path(getattr(settings, d))) for d in ("PRIVATE_DIR", "UPLOAD_DIR",
                                                             "PUBLIC_DIR")}
    assert before["PRIVATE_DIR"] and before["UPLOAD_DIR"]
    (v["tmp"] / "forged").mkdir()
    for name, (change, extra, problem) in _attacks(v).items():
        forged = json.loads(json.dumps(doc))
        change(forged)
        with pytest.raises(InvalidInput) as e:
            import_competition(_write(v["tmp"] / "forged" / "evil.tgz", forged,
                                      {**files, **extra}))
        assert e.value.render().startswith(problem), (name, e.value.render())
        assert not Competition.objects.filter(slug="evil").exists(), name
        for d, tree in before.items():
            assert _tree(Path(getattr(settings, d))) == tree, (name, d)
    # the archive as exported still imports
    assert import_competition(v["archive"])[0].slug == "evil"


def test_an_imported_run_never_names_a_file_already_on_the_server(victim_and_attacker):
    v = victim_and_attacker
    doc, files = _doc(v["archive"])
    files.pop(f"files/uploads/{doc['submissions'][0]['stored_name']}")
    doc["submissions"][0]["stored_name"] = v["run"].stored_name      # alice's upload, not sent
    comp, _ = import_competition(_write(v["tmp"] / "forged.tgz", doc, files))
    mine = comp.phases.get(slug="dev").datasets.get().submissions.order_by("created").first()
    assert mine.stored_name != v["run"].stored_name
    export_competition(comp, v["tmp"] / "again.tgz")
    assert v["run"].path.read_bytes() not in _doc(v["tmp"] / "again.tgz")[1].values()


def test_an_export_packs_only_the_competitions_own_files(victim_and_attacker):
    """A row that names another competition's file (written before imports were
    checked, or by hand) does not bring that file into the export."""
    v = victim_and_attacker
    (Path(settings.PRIVATE_DIR) / v["gold"]).write_bytes(b"BLIND-GOLD-MARKER\n")
    comp, _ = import_competition(v["archive"])
    Dataset.objects.filter(phase__competition=comp, slug="eval").update(
        reference_path=v["gold"])
    export_competition(comp, v["tmp"] / "again.tgz")
    doc, files = _doc(v["tmp"] / "again.tgz")
    assert b"BLIND-GOLD-MARKER\n" not in files.values()
    assert f"files/private/{v['gold']}" not in files


def test_a_scoring_program_travels_as_one_of_the_competitions_files(db, tmp_path):
    import shutil

    from ..coderuns.test_coderuns import program_bundle
    org = get_user_model().objects.create_user("org", password="org-pass-123", is_staff=True)
    comp, _ = load_bundle(program_bundle(tmp_path / "b")[0], org)
    archive = tmp_path / "prog.tgz"
    export_competition(comp, archive)
    doc, files = _doc(archive)
    assert doc["tasks"][-1]["options"] == {"scorer": "prog/scorers/custom"}
    assert "files/private/prog/scorers/custom/score.py" in files
    comp.delete()
    shutil.rmtree(Path(settings.PRIVATE_DIR) / "prog")
    new, _ = import_competition(archive)
    scorer = Path(new.tasks.get(slug="custom").options["scorer"])
    assert scorer == Path(settings.PRIVATE_DIR) / "prog" / "scorers" / "custom"
    assert (scorer / "shareval-system.yaml").is_file()


def test_an_archived_option_value_gets_the_tasks_own_check():
    """The importer refuses what the bundle loader refuses: one check per task."""
    from shareval.formats.errors import InvalidInput
    from shareval.platform.bundles.archive import _check_options
    with pytest.raises(InvalidInput) as e:
        _check_options("tasks[0]", {"task_name": "trec",
                                    "options": {"score_precision": "quad"}}, None)
    [p] = e.value.problems
    assert (p.file, p.field) == ("competition.json", "tasks[0].options.score_precision")
    assert "float" in p.message and "quad" in p.message
