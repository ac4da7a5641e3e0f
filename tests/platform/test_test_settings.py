"""The test settings' promise: every test process works in data folders of its
own, also one forked after the settings were loaded (mutmut forks each mutant's
pytest from one process; two of them sharing a folder failed each other's tests)."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from django.conf import settings

from shareval.platform import test_settings


def test_a_forked_test_process_gets_data_folders_of_its_own():
    before = {k: str(getattr(settings, k)) for k in
              ("HOME", "UPLOAD_DIR", "PRIVATE_DIR", "PUBLIC_DIR", "RESULTS_DIR", "CODERUN_DIR")}
    assert test_settings.own_home() is None          # this process's folders are its own
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                     # the child: report, never return
        try:
            home = test_settings.own_home()
            seen = {k: str(getattr(settings, k)) for k in before}
            seen.update(made=str(home), again=test_settings.own_home() is None,
                        env=os.environ["SHAREVAL_HOME"],
                        coderun_env=os.environ["SHAREVAL_CODERUN_DIR"])
            os.write(w, json.dumps(seen).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        child = json.loads(f.read())
    os.waitpid(pid, 0)
    try:
        home = Path(child["HOME"])
        assert child["made"] == child["env"] == str(home) != before["HOME"]
        assert home.is_dir() and Path(child["CODERUN_DIR"]).is_dir()
        assert child["CODERUN_DIR"] == child["coderun_env"] != before["CODERUN_DIR"]
        assert oct(Path(child["CODERUN_DIR"]).stat().st_mode & 0o777) == oct(0o711)
        for k in ("UPLOAD_DIR", "PRIVATE_DIR", "PUBLIC_DIR", "RESULTS_DIR"):
            assert Path(child[k]) == home / Path(before[k]).name, k
        assert child["again"]                        # once per process
        assert {k: str(getattr(settings, k)) for k in before} == before   # parent untouched
    finally:
        shutil.rmtree(child["HOME"], ignore_errors=True)
        shutil.rmtree(child["CODERUN_DIR"], ignore_errors=True)
