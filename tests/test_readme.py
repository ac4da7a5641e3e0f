"""Every command README.md shows runs as written after `make test` / `make demo`.

The commands are read from README.md itself (every ```sh block; in blocks with
`$ ` prompts, the prompted lines, with the output shown under them), so a
changed README is tested as it stands. Each runs with bash in a copy of the
layout a user has after the set-up commands: `out/demo` written by `shareval
examples`, `.venv` and `../shared/data` beside it. A command passes when its exit
code is the one shown (`echo $?`) or implied (2 for "nothing was scored." and
"refused (400)", else 0) and every output line shown appears in its output
("…" stands for any text, "..." for lines left out); it writes nothing outside
`out/`. `shareval submit` runs against `make demo`'s server, started here. The
few commands not run are listed in NOT_RUN with the reason. No command has an
unquoted `|`, `;`, `&`, `<`, `>` or `{a,b}`: a placeholder such as
`rcc|svident` would run as a pipe.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from shareval.examples import write_examples

from .conftest import ROOT, SHARED_DATA
from .platform.stack import free_port

README = ROOT / "README.md"
DEMO_URL = "http://127.0.0.1:8000"
NOT_RUN = {
    "make demo": "a set-up command: serves until Ctrl-C; its server is started here for the "
                 "`shareval submit` examples, and tests/platform/test_demo.py builds its "
                 "competition",
    "make test": "a set-up command: it runs this test suite",
    "shareval serve-system": "serves until stopped; tests/systems/test_systems.py::"
                             "test_services_answer_and_refuse_bad_requests starts the services",
    "shareval train-system rcc": "retrains the shipped RCC model from the training data "
                                 "(minutes) and overwrites it",
    "shareval train-system svident": "retrains the shipped SV-Ident models from the training "
                                     "data (minutes) and overwrites them",
}
# what a shell does with these characters outside quotes: a README command has none
SHELL_OPERATORS = set("|&;<>")
BRACE_EXPANSION = re.compile(r"\{[^{}\s]*,[^{}\s]*\}")


@dataclass
class Example:
    block: int                                # README line of the block's opening fence
    line: int
    command: str
    output: list[str] = field(default_factory=list)
    exit: int | None = None

    @property
    def needs_server(self) -> bool:
        return self.command.startswith(("shareval submit", "export SHAREVAL_TOKEN"))

    @property
    def expected_exit(self) -> int:
        if self.exit is not None:
            return self.exit
        shown = "\n".join(self.output)
        return 2 if "nothing was scored." in shown or shown.startswith("refused (400)") else 0


def readme_blocks(text: str, lang: str) -> list[tuple[int, list[str]]]:
    blocks, cur, start = [], None, 0
    for n, line in enumerate(text.splitlines(), 1):
        if cur is None and line.strip() == f"```{lang}":
            cur, start = [], n
        elif cur is not None and line.strip() == "```":
            blocks.append((start, cur))
            cur = None
        elif cur is not None:
            cur.append(line)
    return blocks


def readme_examples(text: str) -> list[Example]:
    out: list[Example] = []
    for start, lines in readme_blocks(text, "sh"):
        prompted = any(x.startswith("$ ") for x in lines)
        ex, pending, exit_next = None, "", False
        for k, line in enumerate(lines, start + 1):
            if prompted and not line.startswith("$ ") and not pending:
                if exit_next:                 # the code shown under "echo $?"
                    out[-1].exit, exit_next = int(line), False
                elif ex is not None:
                    ex.output.append(line)
                continue
            body = line[2:] if line.startswith("$ ") else line
            if not prompted and (not body.strip() or body.lstrip().startswith("#")):
                continue
            if body.rstrip().endswith("\\"):
                pending += body.rstrip()[:-1] + " "
                continue
            cmd = " ".join((pending + body).split())
            pending = ""
            if cmd == "echo $?":
                ex, exit_next = None, True
                continue
            ex = Example(start, k, cmd)
            out.append(ex)
    return out


def not_run_reason(cmd: str) -> str | None:
    return next((r for p, r in NOT_RUN.items() if cmd == p or cmd.startswith(p + " ")), None)


def shell_surprises(cmd: str) -> list[str]:
    """What bash would not run as one command: control and redirection operators and
    brace expansions outside quotes (a trailing ``# comment`` is left out)."""
    found, unquoted, quote = [], [], None
    for i, c in enumerate(cmd):
        if quote:
            quote = None if c == quote else quote
            continue
        if c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or cmd[i - 1].isspace()):
            break
        elif c in SHELL_OPERATORS:
            found.append(c)
        unquoted.append(c if quote is None else " ")
    return found + BRACE_EXPANSION.findall("".join(unquoted))


EXAMPLES = readme_examples(README.read_text(encoding="utf-8"))
RUN = [e for e in EXAMPLES if not not_run_reason(e.command)]


def env_for(repo: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SHAREVAL_") and k != "DJANGO_SETTINGS_MODULE"}
    env.update(PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '')}",
               PYTHONPATH=str(ROOT / "src"), COLUMNS="200", **extra)
    return env


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """The layout after `make test`: out/demo, .venv, and ../shared/data next to the repo."""
    top = tmp_path_factory.mktemp("readme")
    repo = top / "shareval"
    repo.mkdir()
    (repo / ".venv").symlink_to(sys.prefix)
    if SHARED_DATA.is_dir():
        (top / "shared").mkdir()
        (top / "shared" / "data").symlink_to(SHARED_DATA)
    data = str(SHARED_DATA) if (SHARED_DATA / "rcc").is_dir() else None
    write_examples(repo / "out" / "demo", data)
    return repo


def run(ex: Example, repo: Path, env: dict, prefix: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", prefix + ex.command], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900)


def check(ex: Example, r: subprocess.CompletedProcess, replace: tuple[str, str] = ("", "")):
    got = (r.stdout + r.stderr).replace(*replace) if replace[0] else r.stdout + r.stderr
    where = f"README.md:{ex.line}: {ex.command}\n--- output ---\n{got[-4000:]}"
    assert r.returncode == ex.expected_exit, where
    assert "Traceback" not in got and "internal error" not in got, where
    lines = [x.rstrip() for x in got.splitlines()]
    for shown in ex.output:
        if shown.strip() in ("...", ""):
            continue
        pattern = ".*".join(re.escape(p) for p in shown.rstrip().split("…"))
        assert any(re.fullmatch(pattern, x) for x in lines), \
            f"not in the output: {shown!r}\n{where}"


def test_the_readme_has_the_examples_this_test_runs():
    cmds = [e.command for e in EXAMPLES]
    assert len(RUN) >= 25, cmds
    for reason in NOT_RUN.values():           # no stale exclusions
        assert any(not_run_reason(c) == reason for c in cmds), reason
    assert any(e.expected_exit == 2 for e in RUN)          # the invalid-input examples
    assert any(e.needs_server for e in RUN)


def test_no_readme_command_is_split_by_the_shell():
    """Every command, run or not, is one command to bash as written: `shareval
    train-system rcc|svident` was a pipe into a command named svident."""
    split = {f"README.md:{e.line}": (e.command, shell_surprises(e.command)) for e in EXAMPLES
             if shell_surprises(e.command)}
    assert split == {}


@pytest.mark.parametrize("cmd, surprises", [
    ("shareval train-system rcc|svident --data ../shared/data", ["|"]),
    ("shareval train-system {rcc,svident} --data ../shared/data", ["{rcc,svident}"]),
    ("shareval score trec -r a -s b > out/x; echo done", [">", ";"]),
    ("shareval assess sample 'a|b=x.tsv' \"{c,d}\" --n 2   # ok|fine; {a,b}", []),
    ("export SHAREVAL_TOKEN=$(shareval server --home out/demo-server token alice)", []),
])
def test_shell_surprises_are_found_outside_quotes(cmd, surprises):
    assert shell_surprises(cmd) == surprises


BLOCKS = sorted({e.block for e in RUN if not e.needs_server})


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: f"README:{b}")
def test_readme_commands_run_as_written(block, repo):
    """One README block's commands in order (a later one may read what an earlier wrote)."""
    skipped = []
    for ex in [e for e in RUN if e.block == block and not e.needs_server]:
        if "../shared/data" in ex.command and not (SHARED_DATA / "rcc").is_dir():
            skipped.append(ex.line)
            continue
        before = set(repo.iterdir())
        check(ex, run(ex, repo, env_for(repo)))
        written = sorted(p.name for p in set(repo.iterdir()) - before)
        assert written == [], f"README.md:{ex.line}: {ex.command} wrote {written} outside out/"
    if skipped:
        pytest.skip(f"README lines {skipped} need ../shared/data (not found at {SHARED_DATA})")


@pytest.mark.realdata
def test_the_svident_run_scores_against_the_readme_reference(repo, shared_data):
    """`shareval run svident` over the README's trial file writes the trial vocabulary's
    ids (v293), the trial file's labels say 293: the output scores as written against that
    file, and the README scores it."""
    import json

    from shareval.tasks import get
    ex = next(e for e in RUN if e.command.startswith("shareval run svident "))
    _, _, _, reference, output = ex.command.split()[:5]
    check(ex, run(ex, repo, env_for(repo)))
    written = json.loads((repo / output / "disambiguation.json").read_text())
    assert any(v.startswith("v") for ranking in written.values() for v in ranking)
    result = get("svident-disambiguation").score(repo / reference,
                                                 repo / output / "disambiguation.json")
    assert result.metrics["map@10"] > 0.5, result.warnings
    assert get("svident-detection").score(repo / reference, repo / output / "detection.json"
                                          ).metrics["f1_macro"] > 0.5
    scored = [e.command for e in RUN if e.command.startswith("shareval score svident-disamb")]
    assert any(f"-r {reference} " in c and f"-s {output}/disambiguation.json" in c
               for c in scored), scored


@pytest.mark.realdata
def test_readme_python_example_runs_as_written(repo, shared_data):
    blocks = readme_blocks(README.read_text(encoding="utf-8"), "python")
    assert blocks
    for start, lines in blocks:
        r = subprocess.run([sys.executable, "-c", "\n".join(lines)], cwd=repo,
                           env=env_for(repo), capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"README.md:{start}\n{r.stderr[-3000:]}"


@pytest.mark.realdata
def test_readme_submit_examples_against_the_demo_server(repo, shared_data):
    """`make demo`'s server (the same command, on a free port), then the README's submit
    examples in order, each seeing the variables the earlier ones exported."""
    port = free_port()
    env = env_for(repo)
    log = open(repo / "demo-server.log", "w")
    server = subprocess.Popen(["shareval", "server", "--home", "out/demo-server", "demo",
                               "--host", "127.0.0.1", "--port", str(port)], cwd=repo, env=env,
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        end = time.monotonic() + 300
        while True:
            try:
                urllib.request.urlopen(url + "/api/competitions/", timeout=2).read()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < end, \
                    (repo / "demo-server.log").read_text()
                time.sleep(0.5)
        env["SHAREVAL_SERVER"] = url
        exports = ""
        for ex in [e for e in RUN if e.needs_server]:
            check(ex, run(ex, repo, env, exports), replace=(url, DEMO_URL))
            if ex.command.startswith("export "):
                exports += ex.command + "; "
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)
        log.close()


def test_make_demo_takes_a_port_and_writes_the_examples_first():
    make = (ROOT / "Makefile").read_text()
    demo = make.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    assert "--port $(PORT)" in demo and "PORT   ?= 8000" in make
    assert demo.index("shareval examples") < demo.index("shareval server")
    test = make.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert test.index("shareval examples") < test.index("pytest")


def test_every_docs_page_is_in_the_documentation_table_and_links_resolve():
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    text = (root / "README.md").read_text()
    table = text.split("## Documentation", 1)[1].split("\n## ", 1)[0]
    linked = set(re.findall(r"\(docs/([\w.-]+\.md)\)", table))
    pages = {p.name for p in (root / "docs").glob("*.md")}
    assert pages - linked == set(), f"docs pages missing from the README table: {pages - linked}"
    for target in re.findall(r"\]\((docs/[\w./-]+?\.md)(?:#[\w-]+)?\)", text):
        assert (root / target).is_file(), target
