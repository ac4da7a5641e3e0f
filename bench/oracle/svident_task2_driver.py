"""Runs SV-Ident's official Task 2 scorer on many inputs in one process.

Run by ``tests/tasks/test_svident_ties.py`` with the oracle environment's Python
(``bench/oracle/svident_task2.sh`` builds it): Python 3.9, ranx 0.2.8, numpy < 2,
and the organizers' ``evaluate_task2.py`` next to this environment, not in this
repository. Each case is written to the four JSON files the script reads and given
to its ``main`` unchanged; its return value (or the error it raised) is kept.

    python svident_task2_driver.py SCRIPT CASES.json OUT.json

CASES.json: a list of ``{"qrels", "run", "langs", "docs", "metrics"}``; the run is
given as the JSON text to write, so the variables' order is exactly the test's.
"""
import contextlib
import importlib.util
import io
import json
import sys
import tempfile
import traceback
import warnings
from pathlib import Path


def load(script: str):
    spec = importlib.util.spec_from_file_location("evaluate_task2", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_case(official, case: dict, folder: Path) -> dict:
    paths = {}
    for name in ("qrels", "run", "langs", "docs"):
        paths[name] = folder / f"{name}.json"
        value = case[name]
        paths[name].write_text(value if isinstance(value, str) else json.dumps(value))
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            result = official.main(str(paths["qrels"]), str(paths["run"]), case["metrics"],
                                   str(paths["langs"]), str(paths["docs"]))
    except Exception:  # noqa: BLE001 - the test shows what the official script refused
        return {"error": traceback.format_exc(limit=3)}
    return json.loads(json.dumps(result, default=float))


def main(script: str, cases_path: str, out_path: str) -> None:
    # ranx 0.2.8 hashes variable ids into float64 columns; numba warns about the cast
    warnings.simplefilter("ignore")
    official = load(script)
    cases = json.loads(Path(cases_path).read_text())
    with tempfile.TemporaryDirectory() as tmp:
        results = [run_case(official, case, Path(tmp)) for case in cases]
    Path(out_path).write_text(json.dumps(results))


if __name__ == "__main__":
    main(*sys.argv[1:4])
