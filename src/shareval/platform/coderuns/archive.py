"""Code submissions in a competition archive (format 2): each code dataset (its
hidden input, public sample and limits; their files travel under
``files/private/``), each uploaded bundle (under ``files/uploads/``) and every
run with its log, resources and the output run it produced, so the imported
boards have the same efficiency columns and the datasets still take code."""
from __future__ import annotations

from shareval.platform.competitions.archive_io import (Files, OwnFolders, dump, load,
                                                       plain_name, user_name)

from shareval.platform.coderuns.models import CodeDataset, CodeRun, CodeSubmission


def export_code(comp, files: Files) -> dict:
    datasets = []
    for cd in (CodeDataset.objects.filter(dataset__phase__competition=comp)
               .select_related("dataset__phase").order_by("pk")):
        datasets.append({**dump(cd), "phase": cd.dataset.phase.slug, "dataset": cd.dataset.slug})
        for rel in (cd.input_path, cd.sample_input_path, cd.sample_reference_path):
            files.private(rel)
    subs = []
    for cs in (CodeSubmission.objects.filter(dataset__phase__competition=comp)
               .select_related("team", "user", "dataset__phase").order_by("created", "pk")):
        subs.append({"id": str(cs.pk), **dump(cs), "team": cs.team.name, "user": user_name(cs.user),
                     "phase": cs.dataset.phase.slug, "dataset": cs.dataset.slug,
                     "runs": [{**dump(r, skip=("worker", "lease_until")),
                               "output_submission": str(r.output_submission_id)
                               if r.output_submission_id else None,
                               "requested_by": user_name(r.requested_by)}
                              for r in cs.runs.select_related("requested_by")
                              .order_by("created", "pk")]})
        files.upload(cs.stored_name)
    return {"datasets": datasets, "submissions": subs}


def check_code_paths(part: dict, own: OwnFolders) -> None:
    for i, cd in enumerate(part.get("datasets", [])):
        for key in ("input_path", "sample_input_path", "sample_reference_path"):
            own.private(f"code.datasets[{i}].{key}", cd.get(key))
    for i, cs in enumerate(part.get("submissions", [])):
        plain_name(f"code.submissions[{i}].stored_name", cs.get("stored_name") or "")


def stored_names(part: dict) -> list[str]:
    return [cs["stored_name"] for cs in part.get("submissions", []) if cs.get("stored_name")]


def import_code(part: dict, users, datasets: dict, teams: dict) -> None:
    """``datasets``: (phase, dataset slug) -> Dataset; ``teams``: name -> Team.
    Output runs (submissions) are already loaded with their ids."""
    for cd in part.get("datasets", []):
        CodeDataset.objects.create(dataset=datasets[(cd["phase"], cd["dataset"])],
                                   **load(CodeDataset, cd))
    for s in part.get("submissions", []):
        cs = CodeSubmission.objects.create(pk=s["id"], team=teams[s["team"]],
                                           user=users(s["user"]),
                                           dataset=datasets[(s["phase"], s["dataset"])],
                                           **load(CodeSubmission, s))
        runs = []
        for r in s["runs"]:
            run = CodeRun(code_submission=cs, requested_by=users(r["requested_by"]),
                          output_submission_id=r["output_submission"], **load(CodeRun, r))
            if run.state == CodeRun.RUNNING:       # an unfinished run is queued again here
                run.state, run.started = CodeRun.QUEUED, None
            runs.append(run)
        CodeRun.objects.bulk_create(runs)
