"""The command line as users call it: exit codes, messages, JSON shape, every command."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from shareval import cli, tasks
from shareval.demo import run_demo
from tests.conftest import write

KEYS = {"task", "scorer_version", "conventions", "metrics", "breakdowns", "counts", "warnings"}


@pytest.fixture
def trec_files(tmp_path):
    q = write(tmp_path / "qrels", "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n")
    r = write(tmp_path / "run", "q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\nq2 Q0 x 1 1.0 t\n")
    return q, r


def test_score_json_shape_and_output_file(cli, trec_files, tmp_path):
    q, r = trec_files
    code, out, err = cli("score", "trec", "-r", q, "-s", r, "--format", "json", "--measures",
                         "map,ndcg@10")
    assert code == 0, err
    d = json.loads(out)
    assert set(d) == KEYS
    assert d["metrics"] == {"map": 0.5, "ndcg@10": 0.5}
    assert all(0.0 <= v <= 1.0 for v in d["metrics"].values())
    assert "ap_denominator" in d["conventions"]
    code, out, _ = cli("score", "trec", "-r", q, "-s", r, "--format", "json", "-o",
                       tmp_path / "res.json")
    assert code == 0 and out == ""
    assert json.loads((tmp_path / "res.json").read_text())["task"] == "trec"


def table_rows(out: str) -> dict[str, str]:
    """The two-column rows of rich's metric table: {metric: printed value}."""
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if len(cells) == 2 and cells[0] and cells[1]:
            rows[cells[0]] = cells[1]
    return rows


def test_table_output(cli, trec_files):
    """The table prints the same numbers as the JSON, to four decimals. By hand: q1 ranks its
    one relevant document (a) first, q2 retrieves only x and misses c, so every per-query
    value is 1 for q1 and 0 for q2, except P@k = 1/k on q1."""
    code, out, _ = cli("score", "trec", "-r", trec_files[0], "-s", trec_files[1])
    assert code == 0
    rows = table_rows(out)
    want = {"map": 0.5, "map@10": 0.5, "p@5": (1 / 5) / 2, "p@10": (1 / 10) / 2,
            "recall@10": 0.5, "recall@100": 0.5, "r_precision": 0.5, "ndcg@10": 0.5, "mrr": 0.5}
    assert rows == {k: f"{v:.4f}" for k, v in want.items()}
    counts = out.split("counts: ", 1)[1].splitlines()[0]
    assert dict(kv.split("=") for kv in counts.split(", ")) == {
        "queries_evaluated": "2", "queries_in_qrels": "2", "queries_in_run": "2",
        "queries_without_relevant": "0", "queries_missing_from_run": "0",
        "run_queries_not_in_qrels": "0", "qrels_lines": "3", "run_lines": "3"}
    per_query = out.split("per_query", 1)[1]
    q1 = next(line for line in per_query.splitlines() if "q1" in line)
    q2 = next(line for line in per_query.splitlines() if "q2" in line)
    assert q1.split("│")[2].strip().startswith("1.0") and q2.split("│")[2].strip().startswith("0.0")


def test_invalid_input_exit_2_lists_problems_no_traceback(cli, tmp_path, trec_files):
    bad = write(tmp_path / "bad.run", "q1 Q0 a one 2.0 t\nq1 Q0 b\n")
    code, out, err = cli("score", "trec", "-r", trec_files[0], "-s", bad)
    assert code == 2
    assert f"{bad}:1: rank: not an integer: 'one'" in err
    assert f"{bad}:2: line: expected 6" in err
    assert "2 problem(s) found" in err and "Traceback" not in err


def test_bad_option_value_is_a_clean_error(cli, trec_files):
    code, _, err = cli("score", "trec", "-r", trec_files[0], "-s", trec_files[1],
                       "--measures", "map,bogus@3")
    assert code == 2 and "measures: unknown measure 'bogus@3'" in err


def test_validate(cli, tmp_path):
    ref = write(tmp_path / "ref.tsv", "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\t"
                                      "uuid\tlang\ns\t1\tv\tR\td\tu1\ten\n")
    ok = write(tmp_path / "ok.json", '{"u1": 1}')
    code, out, _ = cli("validate", "svident-detection", "-s", ok, "-r", ref)
    assert code == 0 and "valid svident-detection submission" in out
    code, out, _ = cli("validate", "svident-detection", "-s", ok)
    assert code == 0 and "ids not checked" in out
    bad = write(tmp_path / "bad.json", '{"u2": 3}')
    code, _, err = cli("validate", "svident-detection", "-s", bad, "-r", ref)
    assert code == 2 and f"{bad}:1: uuid u2: is_variable: expected 0 or 1, found 3" in err


def test_agree(cli, tmp_path):
    f = write(tmp_path / "a.csv", "item,annotator,label\n1,x,a\n1,y,a\n2,x,b\n2,y,a\n3,x,b\n3,y,b\n")
    code, out, _ = cli("agree", f, "--format", "json")
    d = json.loads(out)
    assert code == 0 and set(d) == KEYS
    from sklearn.metrics import cohen_kappa_score
    assert d["metrics"]["cohen_kappa"] == pytest.approx(cohen_kappa_score(list("abb"), list("aab")))
    assert d["counts"] == {"items": 3, "annotators": 2, "judgments": 6, "labels": 2}


def test_compare(cli, tmp_path):
    lines_q = "".join(f"q{i} 0 d{i} 1\n" for i in range(40))
    good = "".join(f"q{i} Q0 d{i} 1 1.0 t\n" for i in range(40))
    poor = "".join(f"q{i} Q0 x{i} 1 2.0 t\nq{i} Q0 d{i} 2 1.0 t\n" for i in range(40))
    q = write(tmp_path / "qrels", lines_q)
    a, b = write(tmp_path / "a", good), write(tmp_path / "b", poor)
    code, out, err = cli("compare", "trec", "-r", q, a, b, "--samples", "2000", "--format", "json")
    assert code == 0, err
    m = json.loads(out)["metrics"]
    assert m["map A"] == 1.0 and m["map B"] == 0.5 and m["difference"] == 0.5
    assert m["p_randomization"] < 0.001 and m["ci_low"] == m["ci_high"] == 0.5


def test_console_script_entry_point(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "shareval.cli", "tasks"], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0
    for name in ("rcc-citations", "rcc-mentions", "rcc-fields-methods", "svident-detection",
                 "svident-disambiguation", "trec", "classification"):
        assert name in proc.stdout


def test_tasks_names_each_primary_metric(cli):
    """docs/kbp.md: entity_f1 (primary); docs/conventions.md: partial_f1 stays the
    primary metric of rcc-mentions; rcc-fields-methods has no gold to rank by."""
    code, out, _ = cli("tasks")
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert code == 0 and set(lines) == set(tasks.names())
    assert lines["kbp-relations"].endswith("(primary metric entity_f1)")
    assert lines["rcc-mentions"].endswith("(primary metric partial_f1)")
    assert lines["rcc-fields-methods"].endswith("(no primary metric: not ranked)")


def test_internal_errors_have_no_traceback(cli, monkeypatch, trec_files):
    from shareval.tasks import trec
    monkeypatch.setattr(trec.TrecTask, "_score", lambda *a, **k: 1 / 0)
    code, _, err = cli("score", "trec", "-r", trec_files[0], "-s", trec_files[1])
    assert code == 1 and "internal error: ZeroDivisionError" in err and "Traceback" not in err


def test_demo_on_synthetic_sample(tmp_path, monkeypatch):
    from rich.console import Console
    monkeypatch.chdir(tmp_path)          # no ../shared/data from here
    console = Console(record=True, width=120)
    assert run_demo(None, str(tmp_path / "out"), console) == 0
    text = console.export_text()
    assert "synthetic sample" in text and "counts as constructed" in text
    assert "MISMATCH" not in text


def test_examples_without_shared_data_write_inputs_that_run(tmp_path, monkeypatch, cli):
    """`shareval examples` on a machine without ../shared/data: the synthetic sample's files,
    and bad/broken submissions that fail exactly as the README says they do."""
    monkeypatch.chdir(tmp_path)          # no ../shared/data from here
    code, out, _ = cli("examples", "--out", "out/demo")
    assert code == 0 and "out/demo" in out
    demo = tmp_path / "out" / "demo"
    ref = demo / "synthetic-data" / "sv-ident" / "train" / "train.tsv"
    code, _, err = cli("validate", "svident-detection", "-s", demo / "bad.json", "-r", ref)
    lines = err.splitlines()
    assert code == 2 and lines[-1] == "3 problem(s) found; nothing was scored.", err
    assert "bad.json:2: " in lines[0] and "expected 0 or 1, found 2" in lines[0]
    assert "1 uuid is not in the reference: 'not-a-uuid'" in lines[1]
    assert "30 sentences have no prediction" in lines[2]       # the last synthetic document
    code, _, err = cli("validate", "svident-detection", "-s", demo / "broken.json", "-r", ref)
    assert code == 2 and "broken.json:3:" in err and "expected ':'" in err
    for task in ("material-clir", "material-domainid", "material-e2e"):    # the table form
        code, _, err = cli("score", task, "-r", demo / "material-pack", "-s", demo / task)
        assert code == 0, (task, err)
    # DomainID over the five text documents: GOV is {0, 2}, the system says {0, 3}
    # (X1 1, X2 1, X3 1, X4 2); MIL is {1}, the system says nothing (X2 1, X4 4)
    code, out, err = cli("score", "material-domainid", "-r", demo / "material-pack", "-s",
                         demo / "material-domainid", "--format", "json")
    d = json.loads(out)
    assert code == 0, err
    assert d["metrics"] == pytest.approx({"detected": 1 / 3, "missed": 2 / 3,
                                          "false_alarms": 1 / 3, "correct_rejections": 6 / 3})
    assert d["counts"] == {"domains": 2, "documents_scored": 5, "x1": 1, "x2": 2, "x3": 1,
                           "x4": 6}
    # E2E (beta 59.9 for 1A): query1 retrieves doc 0 (relevant, judges 3 of 3: kept) and doc 2
    # (not relevant, judges 1 of 3: the false alarm becomes a correct rejection); query1 misses
    # doc 1 and query3 its doc 4; query2 has nothing relevant and retrieves nothing.
    beta = 59.9
    code, out, err = cli("score", "material-e2e", "-r", demo / "material-pack", "-s",
                         demo / "material-e2e", "--format", "json")
    d = json.loads(out)
    assert code == 0, err
    p_miss = (1 / 2 + 1) / 2                                  # over the 2 queries with relevant
    want = {"aqwv": 1 - p_miss, "aqwv_all": (0.5 + 1 + 0) / 3, "aqwv_with_relevant": 0.5 / 2,
            # fractional credit: doc 2 keeps 1/3 of a false alarm among query1's 4 non-relevant
            "aqwv_raw": 1 - (p_miss + beta * (1 / 3 / 4) / 3),
            "aqwv_raw_all": ((0.5 - beta / 12) + 1 + 0) / 3,
            "aqwv_raw_with_relevant": ((0.5 - beta / 12) + 0) / 2,
            # document-weighted: 2 of the 3 relevant pairs missed; 1/3 of a false alarm among
            # the 15 non-relevant pairs
            "adwv": 1 - 2 / 3, "adwv_raw": 1 - (2 / 3 + beta * (1 / 3) / 15),
            # the CLIR decisions before judging: doc 2 is a whole false alarm
            "clir_aqwv_at_e2e_beta": 1 - (p_miss + beta * (1 / 4) / 3)}
    clir_part = {k: v for k, v in d["metrics"].items() if k.startswith("clir_") and
                 k != "clir_aqwv_at_e2e_beta"}
    assert {k: v for k, v in d["metrics"].items() if k not in clir_part} == \
        pytest.approx(want, abs=1e-12)
    assert (d["counts"]["beta"], d["counts"]["summaries"], d["counts"]["judged_pairs"]) == \
        (beta, 2, 3)
    assert d["conventions"]["system"] == "TEAMX.Sys1"        # the summaries' names
    code, out, err = cli("score", "material-clir", "-r", demo / "material-pack", "-s",
                         demo / "material-clir", "--beta", "20", "--format", "json")
    # query1 finds one of its two relevant documents and one of four others; query3 misses
    # its one; query2 has none: P_miss (1/2 + 1) / 2, P_FA (1/4 + 0 + 0) / 3 (plan Eq. 3)
    clir = json.loads(out)["metrics"]
    assert clir["aqwv"] == pytest.approx(1 - (0.75 + 20 * 0.25 / 3))
    # the E2E run holds the same decisions and confidences: its CLIR part at the CLIR
    # beta (20 for 1A) is material-clir's score (plan 8.1)
    assert clir_part == {f"clir_{k}": clir[k] for k in ("aqwv", "aqwv_all",
                                                         "aqwv_with_relevant", "mqwv",
                                                         "roc_auc", "adwv")}
    # --system picks the judgments' rows: the pack's file has none of another system
    code, _, err = cli("score", "material-e2e", "-r", demo / "material-pack", "-s",
                       demo / "material-e2e", "--judgments", demo / "judgments.tsv",
                       "--system", "TEAMY.Sys2")
    assert code == 2 and f"{demo / 'judgments.tsv'}: system: no judgment for system " \
                          f"TEAMY.Sys2; the file has systems TEAMX.Sys1" in err, err
    # the contract's form: the run last, its own system named (the same rows as by default)
    code, out, err = cli("score", "material-e2e", "-r", demo / "material-pack", "--judgments",
                         demo / "judgments.tsv", "--system", "TEAMX.Sys1", "--format", "json",
                         demo / "material-e2e")
    assert code == 0 and json.loads(out)["metrics"] == d["metrics"], err
    code, out, _ = cli("score", "rcc-fields-methods", "-s", demo / "methods.json", "--compare",
                       demo / "other_methods.json", "--format", "json")
    assert code == 0 and json.loads(out)["metrics"]["value_set_jaccard"] == 2 / 4


def _terminal(monkeypatch):
    """Make stderr look like a terminal (what rich and progress.shown() ask)."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setenv("TERM", "xterm")


def _plain(text: str) -> str:
    """Terminal output without its colour and cursor codes."""
    import re
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def _compare_args(tmp_path):
    q = write(tmp_path / "qrels", "".join(f"q{i} 0 d{i} 1\n" for i in range(40)))
    a = write(tmp_path / "a", "".join(f"q{i} Q0 d{i} 1 1.0 t\n" for i in range(40)))
    b = write(tmp_path / "b", "".join(f"q{i} Q0 x{i} 1 2.0 t\nq{i} Q0 d{i} 2 1.0 t\n"
                                      for i in range(40)))
    return ("compare", "trec", "-r", q, a, b, "--samples", "3000", "--format", "json")


def test_compare_progress_only_on_a_terminal_and_not_with_quiet(cli, tmp_path, monkeypatch):
    import re
    args = _compare_args(tmp_path)
    code, out, err = cli(*args)                      # pytest's stderr: no terminal
    assert code == 0 and err == "" and json.loads(out)["metrics"]["map A"] == 1.0
    _terminal(monkeypatch)
    code, out2, err = cli(*args)
    err = _plain(err)
    assert code == 0 and out2 == out                 # the bar goes to stderr only
    assert "compare: " in err and re.search(r"\b4/4\b", err), err
    code, out3, err = cli(*args, "--quiet")
    assert code == 0 and err == "" and out3 == out


def test_demo_progress_counts_its_steps_only_on_a_terminal(cli, tmp_path, monkeypatch):
    import re
    monkeypatch.chdir(tmp_path)                      # no ../shared/data from here
    code, _, err = cli("demo", "--out", "out1")
    assert code == 0 and "demo:" not in err
    _terminal(monkeypatch)
    code, out, err = cli("demo", "--out", "out2")
    err = _plain(err)
    assert code == 0 and "demo summary" in out       # the tables still go to stdout
    done = re.findall(r"\b(\d+)/(\d+)\b", err)
    assert "demo: " in err and done and done[-1][0] == done[-1][1] == "10", err[-500:]
    code, _, err = cli("demo", "--out", "out3", "--quiet")
    assert code == 0 and "demo:" not in err


def _pool_after_score(tmp_path, env_pool, large_from=None):
    """The allocator pyarrow used in a process that scored a tiny run (read with
    pyarrow), and its JE_ARROW_MALLOC_CONF; ``large_from``: cli.LARGE_INPUT_BYTES."""
    import os
    import subprocess
    import sys
    (tmp_path / "q").write_text("q1 0 d1 1\n")
    (tmp_path / "r").write_text("q1 Q0 d1 1 2.0 t\n")
    code = ("import shareval.formats.trec as t; t.SMALL_FILE_BYTES = 0\n"
            "from shareval import cli\n"
            + (f"cli.LARGE_INPUT_BYTES = {large_from}\n" if large_from is not None else "")
            + f"assert cli.run(['score', 'trec', '-r', {str(tmp_path / 'q')!r}, '-s', "
            f"{str(tmp_path / 'r')!r}, '--format', 'json', '-o', {str(tmp_path / 'o')!r}]) == 0\n"
            "import os, pyarrow as pa\n"
            "print(os.environ.get('JE_ARROW_MALLOC_CONF', '-'), "
            "pa.default_memory_pool().backend_name)")
    env = {k: v for k, v in os.environ.items()
           if k not in ("ARROW_DEFAULT_MEMORY_POOL", "JE_ARROW_MALLOC_CONF")}
    if env_pool:
        env["ARROW_DEFAULT_MEMORY_POOL"] = env_pool
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True)
    return out.stdout.split()[-2:]


def test_one_shot_commands_read_with_the_system_allocator_unless_told(tmp_path):
    """score/validate/compare under LARGE_INPUT_BYTES: the C library's allocator (less
    kernel time on virtual machines, docs/dev/i41-ranking.md); an operator's
    ARROW_DEFAULT_MEMORY_POOL wins."""
    assert _pool_after_score(tmp_path, None) == ["-", "system"]
    assert _pool_after_score(tmp_path, "jemalloc") == ["-", "jemalloc"]


def test_large_inputs_are_read_with_jemalloc_returning_pages_at_once(tmp_path):
    """From LARGE_INPUT_BYTES of input (here: any), jemalloc with no decay delay (half
    the peak at 10M lines); an operator's ARROW_DEFAULT_MEMORY_POOL still wins."""
    assert cli.LARGE_INPUT_BYTES == 256 * 2 ** 20
    assert _pool_after_score(tmp_path, None, large_from=0) == [
        "dirty_decay_ms:0,muzzy_decay_ms:0", "jemalloc"]
    assert _pool_after_score(tmp_path, "system", large_from=0) == ["-", "system"]


def test_input_bytes_add_up_the_files_and_folders_a_command_reads(tmp_path):
    import argparse
    (tmp_path / "ref.txt").write_bytes(b"x" * 10)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "a.tsv").write_bytes(b"x" * 5)
    (tmp_path / "run" / "deep").mkdir()
    (tmp_path / "run" / "deep" / "b.tsv").write_bytes(b"x" * 7)
    args = argparse.Namespace(reference=str(tmp_path / "ref.txt"),
                              submission=str(tmp_path / "run"), quiet=True)
    assert cli._input_bytes(args) == 22
    args.submission = str(tmp_path / "missing")
    assert cli._input_bytes(args) == 10


def _entry_gc_calls(monkeypatch, argv):
    import gc
    calls = []
    monkeypatch.setattr(sys, "argv", ["shareval", *argv])
    monkeypatch.setattr(cli, "main", lambda: 3)
    monkeypatch.setattr(gc, "set_threshold", lambda *a: calls.append(("threshold", a)))
    monkeypatch.setattr(gc, "freeze", lambda: calls.append(("freeze",)))
    with pytest.raises(SystemExit) as e:
        cli.entry()
    assert e.value.code == 3                  # main's exit code is the process's
    return calls


def test_one_shot_commands_collect_garbage_rarely_and_skip_the_collection_at_exit(monkeypatch):
    import gc
    rest = gc.get_threshold()[1:]
    for command in cli.ONE_SHOT_COMMANDS:
        assert _entry_gc_calls(monkeypatch, [command, "trec"]) == [
            ("threshold", (cli.ONE_SHOT_GC_THRESHOLD, *rest)), ("freeze",)]


def test_the_server_and_other_commands_keep_the_collectors_defaults(monkeypatch):
    for argv in (["server", "run"], ["tasks"], []):
        assert _entry_gc_calls(monkeypatch, argv) == []


def test_the_installed_command_and_python_m_run_entry():
    import tomllib
    meta = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert meta["project"]["scripts"]["shareval"] == "shareval.cli:entry"
    out = subprocess.run([sys.executable, "-m", "shareval.cli", "score", "nonesuch"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "nonesuch" in out.stderr and "Traceback" not in out.stderr
