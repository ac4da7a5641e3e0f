"""A hostile E2E archive against the web process (i37 security review): images
whose headers pass the task's reader (PNG, 1024 px wide) but whose bodies are
large (compressible padding: a small upload) are refused one by one as they are
read, never all held in memory, base64-encoded, before the size check."""
from __future__ import annotations

import io
import json
import tarfile

from shareval import examples
from shareval.formats.errors import InvalidInput, Problems
from shareval.platform.judging import e2e_items
from shareval.tasks.material.base import iter_submission_files, pack_limits

from ...memory import python_peak
from .test_judging_e2e import e2e, png  # noqa: F401 -- fixture

DOCS = examples.DOCS
PAD = 3 * 1024 * 1024                    # each image 3 MB: over build.MAX_IMAGE (2 MB)


def _bomb(path):
    """Every line of every query a Y line with its summary and a padded image."""
    files = {}
    for q in ("query1", "query2", "query3"):
        lines = []
        for doc in DOCS:
            base = f"EVIL.sys.{q}.{doc}"
            meta = {"team_id": "EVIL", "sys_label": "sys", "uuid":
                    "dc91049e-d934-40d7-a175-5af32cbabbca", "query_id": q,
                    "document_id": doc, "run_name": "r",
                    "run_date_time": "2018-03-27T13:51:00-05:00",
                    "image_filename": f"{base}.png", "content_list": ["w"]}
            files[f"{q}/{base}.json"] = json.dumps(meta).encode()
            files[f"{q}/{base}.png"] = png() + b"\0" * PAD
            lines.append(f"{doc}\tY\t0.9\t{base}.json")
        files[f"{q}/{q}.tsv"] = ("\n".join(lines) + "\n").encode()
    with tarfile.open(path, "w:gz") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))


class _Run:
    def __init__(self, path):
        self.path, self.original_name = path, "sys.tgz"


def test_oversized_images_are_refused_as_read_not_all_held_first(e2e, tmp_path):  # noqa: F811
    path = tmp_path / "sys.tgz"
    _bomb(path)
    assert path.stat().st_size < 1024 * 1024          # a small upload: 54 MB unpacked
    ds = e2e["ds"]
    task = ds.task.registry_task
    pack = task.load_reference(str(ds.reference_file))
    task.load_submission(str(path), pack, name="sys.tgz")    # passes: headers are fine
    # what reading the archive once costs, one member at a time
    baseline, _ = python_peak(lambda: [None for _ in iter_submission_files(
        str(path), Problems(), pack_limits(pack))], warm=False)
    failed = []

    def read():
        try:
            e2e_items.read_summaries(task, pack, _Run(path))
        except InvalidInput as e:
            failed.append(e)
    peak, _ = python_peak(read, warm=False)
    assert failed and "larger than" in str(failed[0].problems[0])
    # not 18 images held base64-encoded (72 MB) before the size check
    assert peak < baseline + 4 * PAD, (peak, baseline)
