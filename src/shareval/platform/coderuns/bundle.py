"""The bundle's code options for a dataset (read by bundles/loader.py)::

    datasets:
      - slug: eval-code
        task: labels
        reference: gold-eval.tsv        # scored against, as for uploaded files
        submission: code                # output (default) | code | both
        code:
          input: hidden-input/          # required: what the system reads; never served
          sample_input: sample/input/   # optional: the test run's public sample
          sample_reference: sample/gold.tsv
          limits: {wall_seconds: 600, memory_mb: 2048}        # a run's defaults
          max_limits: {wall_seconds: 3600, memory_mb: 8192}   # the most a manifest may ask
"""
from __future__ import annotations

from pathlib import Path

from django.conf import settings

from shareval.sandbox.bundle import LIMIT_KEYS

MODES = ("output", "code", "both")


def read_code(r, d: dict, where: str) -> dict | None:
    """The dataset's code options, or None for an output-only dataset; problems go to
    the bundle reader ``r``."""
    mode = str(d.get("submission", "output"))
    if mode not in MODES:
        r.err(d, f"{where}.submission", "output, code or both")
        return None
    code = d.get("code") or {}
    if mode == "output":
        if code:
            r.err(d, f"{where}.code", "only for datasets with submission: code or both")
        return None
    if not isinstance(code, dict):
        r.err(d, f"{where}.code", "expected a mapping")
        return None
    out = {"mode": mode, "input": r.file(code, "input", f"{where}.code"),
           "sample_input": r.file(code, "sample_input", f"{where}.code", required=False),
           "sample_reference": r.file(code, "sample_reference", f"{where}.code",
                                      required=False), "limits": {}, "max_limits": {}}
    for key in ("limits", "max_limits"):
        lim = code.get(key) or {}
        for k, v in (lim.items() if isinstance(lim, dict) else []):
            if k == "__line__":
                continue
            if k not in LIMIT_KEYS:
                r.err(code, f"{where}.code.{key}.{k}", f"unknown; known: {', '.join(LIMIT_KEYS)}")
            elif not isinstance(v, (int, float)) or v <= 0:
                r.err(code, f"{where}.code.{key}.{k}", "a positive number is required")
            else:
                out[key][k] = v
    return out


def save_code(ds, code: dict | None, copy, digest) -> None:
    """Store the inputs under PRIVATE_DIR and the options; ``copy``/``digest`` are the
    bundle loader's own helpers (so every path is checked the same way)."""
    from shareval.platform.coderuns.models import CodeDataset
    if code is None:
        CodeDataset.objects.filter(dataset=ds).delete()
        return
    base = f"{ds.phase.competition.slug}/{ds.phase.slug}/{ds.slug}/code"
    fields = {"mode": code["mode"], "limits": code["limits"], "max_limits": code["max_limits"],
              "sample_input_path": "", "sample_reference_path": "", "sample_digest": ""}
    rel = f"{base}/input"
    fields["input_path"], fields["input_digest"] = rel, digest(
        copy(code["input"], Path(settings.PRIVATE_DIR), rel))
    if code["sample_input"] is not None:
        rel = f"{base}/sample-input"
        fields["sample_input_path"] = rel
        fields["sample_digest"] = digest(copy(code["sample_input"], Path(settings.PRIVATE_DIR),
                                              rel))
    if code["sample_reference"] is not None:
        rel = f"{base}/sample-reference{''.join(code['sample_reference'].suffixes)}"
        copy(code["sample_reference"], Path(settings.PRIVATE_DIR), rel)
        fields["sample_reference_path"] = rel
    CodeDataset.objects.update_or_create(dataset=ds, defaults=fields)


# ---------------------------------------------------------------------------
# Organizers' scoring programs (task: program)
#
#     tasks:
#       - slug: custom
#         task: program
#         primary_metric: f1              # required: the program names its metrics
#         options: {scorer: scorer/}      # a folder with shareval-system.yaml

def read_program(r, node: dict, where: str, task: dict) -> None:
    """Check a ``program`` task's scorer folder; remember it as ``task["scorer_dir"]``."""
    if task.get("task") != "program":
        return
    opts = node.get("options") if isinstance(node.get("options"), dict) else {}
    folder = r.file({**opts, "__line__": node.get("__line__")}, "scorer",
                    f"{where}.options") if opts.get("scorer") else None
    if not opts.get("scorer"):
        r.err(node, f"{where}.options.scorer", "required: the folder of the scoring program")
    elif folder is not None and not (folder / "shareval-system.yaml").is_file():
        r.err(node, f"{where}.options.scorer", f"{opts['scorer']}: no shareval-system.yaml "
                                               f"in it")
        folder = None
    if not task.get("primary_metric"):
        r.err(node, f"{where}.primary_metric", "required for a program task (the program "
                                               "names its metrics)")
    task["scorer_dir"] = folder


def save_programs(comp, tasks: list[dict], copy, digest) -> None:
    """Copy each program task's scorer under PRIVATE_DIR, point the task's option at
    it, and fold the scorer's digest into its datasets' reference digests, so a
    changed program is a changed scorer: ``rescore`` scores again."""
    import hashlib

    from shareval.platform.competitions.models import CompetitionTask, Dataset
    for t in tasks:
        if t.get("task") != "program" or t.get("scorer_dir") is None:
            continue
        dest = copy(t["scorer_dir"], Path(settings.PRIVATE_DIR), f"{comp.slug}/scorers/{t['slug']}")
        ct = CompetitionTask.objects.get(competition=comp, slug=t["slug"])
        ct.options = {**ct.options, "scorer": str(dest)}
        ct.save(update_fields=["options"])
        scorer = digest(dest)
        for ds in Dataset.objects.filter(task=ct):
            ds.reference_digest = hashlib.sha256(
                f"{ds.reference_digest}:{scorer}".encode()).hexdigest()
            ds.save(update_fields=["reference_digest"])
