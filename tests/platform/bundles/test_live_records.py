"""End to end (issue 24), in both server modes: ``shareval submit --method
--factsheet``, a board with several runs per team, and ``shareval server
export-competition`` loaded by ``import-competition`` into a fresh server (its
own database) with identical leaderboards."""
from __future__ import annotations

from ..factories import run_with_accuracy
from ..submissions.test_live import setup_world

SHEET = {"required": ["method"], "training": ["constrained", "unconstrained"],
         "fields": [{"name": "ensemble", "type": "bool"}]}


def test_cli_fact_sheet_board_and_archive_into_a_fresh_server(stacks, tmp_path):
    a = stacks("home-a")
    tokens = setup_world(a, tmp_path, extra={"factsheet": SHEET},
                         options={"dev": {"board": {"runs": "all"}, "concurrent": 3}})
    a.start()
    env = {"SHAREVAL_SERVER": a.url, "SHAREVAL_TOKEN": tokens["alice"]}
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("training: constrained\nensemble: true\npaper: https://example.org/x\n")
    files = {}
    for n in (16, 12):
        files[n] = tmp_path / f"run{n}.tsv"
        files[n].write_text(run_with_accuracy(n))
    r = a.cli("submit", "-c", "tiny", "-p", "dev", "-t", "labels", files[12], check=False,
              extra_env=env)
    assert r.returncode == 2 and "factsheet.method: required" in r.stdout, r.stdout
    r = a.cli("submit", "-c", "tiny", "-p", "dev", "-t", "labels", "--primary", "--wait",
              "--method", "primary-sys", "--factsheet", sheet, files[16], extra_env=env)
    assert "accuracy\t0.8000" in r.stdout, r.stdout
    r = a.cli("submit", "-c", "tiny", "-p", "dev", "-t", "labels", "--wait",
              "--method", "contrastive-sys", files[12], extra_env=env)
    sid = r.stdout.split("submission ")[1].split()[0]
    code, body = a.api("GET", f"/api/submissions/{sid}/", tokens["alice"])
    assert body["factsheet"] == {"method": "contrastive-sys"}
    code, board = a.api("GET", "/api/competitions/tiny/leaderboard/dev/dev/")
    assert [(x["team"], x["run"], x["method"]) for x in board["rows"]] == [
        ("Team A", "primary", "primary-sys"), ("Team A", "contrastive", "contrastive-sys"),
        ("Baseline", "primary", "")]
    archive = tmp_path / "tiny.tgz"
    r = a.cli("server", "export-competition", "tiny", "--out", archive)
    assert "competition tiny" in r.stdout, r.stdout
    b = stacks("home-b")
    r = b.cli("server", "import-competition", archive)
    assert "3 teams, 3 submissions" in r.stdout and "alice" in r.stdout, r.stdout
    b.start()
    for path in ("/api/competitions/tiny/leaderboard/dev/dev/",
                 "/api/competitions/tiny/leaderboard/eval/eval/", "/api/competitions/tiny/"):
        assert b.api("GET", path) == a.api("GET", path), path
    r = b.cli("server", "import-competition", archive, check=False)
    assert r.returncode == 2 and "already has a competition 'tiny'" in r.stdout, r.stdout
