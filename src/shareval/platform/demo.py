"""``make demo``: a demo competition from ../shared/data, served on 127.0.0.1:8000.

Two tasks (SV-Ident detection, RCC dataset citations), a development phase with
a public leaderboard and weekly quotas, and a blind evaluation phase. The
hidden references are only the declared held-out parts of the shared training
data (``systems/training.py``), which the shipped RCC model was *not* trained on,
so its score on the demo boards is a held-out score. The shipped SV-Ident
detection model is trained on every document, the demo's too; the SV-Ident
boards' reference-system baseline uses the same recipe trained without the
held-out documents (``train-system svident --split train``), trained on the
first start and kept in the demo's home (:func:`held_out_detection_model`).
The other baselines are real, simple systems computed here (a keyword rule for
SV-Ident, the 3 most cited training datasets for RCC). All are scored by the
worker before the server opens.
"""
from __future__ import annotations

import csv
import datetime as dt
import json
import re
import secrets
import string
from collections import Counter
from pathlib import Path

import yaml

from shareval.systems.training import rcc_held_out, svident_held_out

from shareval.platform.demo_judging import add_rcc_content, set_up_judging, team_runs

KEYWORDS = re.compile(r"\b(question|asked|respondents?|survey|scale|items?|measured|agree|"
                      r"Frage|gefragt|Befragten?|Skala|Zustimmung|Umfrage)\b", re.I)
SPLITS = ("Built by `make demo` from ../shared/data, using only the declared held-out "
          "splits of the training data (docs/systems.md), which the reference systems as "
          "measured there were not trained on. SV-Ident: the held-out training documents "
          "(per language, every fourth in id order), per language alternately development "
          "and evaluation. The SV-Ident boards' reference-system baseline uses a detection "
          "model trained without them (`shareval train-system svident --split train --out "
          "F`, then `shareval run svident ... --model F`), so its score is an unseen-data "
          "score; the shipped detection model (`shareval run svident` without `--model`) "
          "was trained on every document, these too, and scores far higher here than on "
          "unseen data. RCC development: the held-out publications, those whose id is "
          "divisible by 5. The other training documents and publications, which the "
          "reference models learned from, are in no phase.")
# the held-out detection model, beside the demo's bundle folder (in the demo's home)
DETECTION_MODEL = "demo-svident-detection.npz"
REFERENCE_SYSTEM = ("shareval's SV-Ident detection (`shareval run svident`) with a model "
                    "trained without the demo's documents (`shareval train-system svident "
                    "--split train`): an unseen-data score")
ACCOUNTS = [("organizer", True, None), ("alice", False, "Team Alpha"), ("bob", False, "Team Beta"),
            ("carol", False, "Team Gamma"), ("judge", False, None), ("annotator", False, None)]
DEMO_TEAMS = ("Team Alpha", "Team Beta")        # carol's Team Gamma is in material-demo only


def new_password(length: int = 12) -> str:
    """Letters and digits only: a password starting with '-' could not follow
    ``--password`` on a command line."""
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(length))


def find_data_or_none(data: str | None) -> Path | None:
    from shareval.demo import find_data
    return find_data(data)


def _find_data(data: str | None) -> Path:
    from shareval.demo import find_data
    p = find_data(data)
    if p is None:
        raise SystemExit("the server demo needs ../shared/data (rcc/train and sv-ident/train); "
                         "pass --data DIR")
    return p


def svident_split(rows: list[dict]) -> dict[str, int]:
    """doc_id -> 0 (development) or 1 (evaluation), for the held-out documents only: per
    language in the held-out order, alternately development and evaluation."""
    held = svident_held_out(rows)
    counts: dict[str, Counter] = {}
    for r in rows:
        counts.setdefault(r["doc_id"], Counter())[r["lang"]] += 1
    lang = {d: counts[d].most_common(1)[0][0] for d in held}
    part = {}
    for lg in sorted(set(lang.values())):
        docs = sorted((d for d in held if lang[d] == lg), key=lambda d: (len(d), d))
        part.update({d: i % 2 for i, d in enumerate(docs)})
    return part


def held_out_detection_model(data: Path, path: Path, log=print):
    """The SV-Ident detection model trained without the declared held-out documents (the
    demo's phases), kept at ``path``: trained on the first start (about a minute), read on
    later ones. A file at ``path`` that is not such a model is trained anew."""
    from shareval.systems import svident
    from shareval.systems.training import read_svident_train, train_svident_detection
    train_tsv = data / "sv-ident/train/train.tsv"
    held = svident_held_out(read_svident_train(train_tsv))
    model = _load_model(path)
    if model is not None and _never_saw(model.meta, held):
        return model
    log(f"training the SV-Ident detection model without the demo's documents into {path} "
        f"(once; about a minute) ...")
    partial = path.with_name(path.name + ".partial.npz")
    train_svident_detection(train_tsv, out=partial, split="train", log=log)
    partial.replace(path)
    return svident.DetectionModel.load(path)


def _load_model(path: Path):
    from shareval.systems import svident
    try:
        return svident.DetectionModel.load(path)
    except Exception:       # missing, or not a model file (np.load raises many kinds)
        return None


def _never_saw(meta: dict, documents: set[str]) -> bool:
    """Whether a model's metadata says it was trained without ``documents``."""
    return meta.get("split") == "train" and documents <= set(meta.get("held_out_documents", ()))


def _svident(data: Path, out: Path, model) -> dict:
    from shareval.systems import svident
    rows = list(csv.DictReader(open(data / "sv-ident/train/train.tsv", encoding="utf-8"),
                               delimiter="\t"))
    part = svident_split(rows)
    files = {}
    for name, k in (("dev", 0), ("eval", 1)):
        sel = [r for r in rows if part.get(r["doc_id"]) == k]
        ref = out / f"svident-{name}-reference.tsv"
        with open(ref, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter="\t", lineterminator="\n")
            w.writeheader()
            w.writerows(sel)
        inp = out / f"svident-{name}-sentences.tsv"
        with open(inp, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, delimiter="\t", lineterminator="\n")
            w.writerow(["uuid", "doc_id", "lang", "sentence"])
            w.writerows([r["uuid"], r["doc_id"], r["lang"], r["sentence"]] for r in sel)
        base = out / f"svident-{name}-keyword-baseline.json"
        base.write_text(json.dumps({r["uuid"]: int(bool(KEYWORDS.search(r["sentence"])))
                                    for r in sel}))
        system = out / f"svident-{name}-reference-system.json"
        found = svident.detect([r["sentence"] for r in sel], None, model)
        system.write_text(json.dumps({r["uuid"]: d for r, (d, _) in zip(sel, found)}))
        files[name] = (ref, inp, base, system)
    return files


def _rcc(data: Path, out: Path) -> tuple[Path, Path, Path]:
    cits = json.loads((data / "rcc/train/data_set_citations.json").read_text())
    pubs = json.loads((data / "rcc/train/publications.json").read_text())
    dev = {p["publication_id"] for p in pubs if rcc_held_out(p["publication_id"])}
    ref = out / "rcc-dev-reference"
    ref.mkdir(exist_ok=True)
    (ref / "data_set_citations.json").write_text(json.dumps(
        [c for c in cits if c["publication_id"] in dev], indent=1))
    dev_pubs = [{"publication_id": p["publication_id"], "title": p.get("title", "")}
                for p in pubs if p["publication_id"] in dev]
    (ref / "publications.json").write_text(json.dumps(dev_pubs, indent=1))
    add_rcc_content(data, ref, {str(p) for p in dev})       # what judges read (demo_judging)
    public = out / "rcc-dev-publications.json"
    public.write_text(json.dumps(dev_pubs, indent=1))
    # prior baseline: the 3 datasets cited most often in the other publications, for every
    # one, scored by the share of publications citing them (3 thresholds: a PR curve)
    freq = Counter(c["data_set_id"] for c in cits if c["publication_id"] not in dev)
    n_pubs = max(1, len({c["publication_id"] for c in cits if c["publication_id"] not in dev}))
    base = out / "rcc-dev-prior-baseline.json"
    base.write_text(json.dumps([{"publication_id": p["publication_id"], "data_set_id": top,
                                 "mention_list": [], "score": round(n / n_pubs, 4)}
                                for p in dev_pubs for top, n in freq.most_common(3)], indent=1))
    return ref, public, base


def build_bundle(data: Path, out: Path, now: dt.datetime, detection_model: Path | None = None,
                 log=print) -> Path:
    """The demo's bundle in ``out``; ``detection_model`` is where the held-out SV-Ident
    detection model is kept (default: beside ``out``)."""
    out.mkdir(parents=True, exist_ok=True)
    model = held_out_detection_model(data, detection_model or out.parent / DETECTION_MODEL, log)
    sv = _svident(data, out, model)
    rref, rpub, rbase = _rcc(data, out)
    day = dt.timedelta(days=1)
    iso = lambda t: t.replace(microsecond=0).isoformat()           # noqa: E731
    bundle = {
        "slug": "demo", "title": "shareval demo: survey variables and dataset citations",
        "description": SPLITS,
        "time_zone": "Europe/Berlin",
        "tasks": [{"slug": "svident-detection", "task": "svident-detection",
                   "title": "SV-Ident Task 1: variable detection"},
                  {"slug": "rcc-citations", "task": "rcc-citations",
                   "title": "Rich Context: dataset citations"}],
        "phases": [
            {"slug": "development", "title": "Development", "start": iso(now - 7 * day),
             "end": iso(now + 60 * day), "leaderboard": "public", "datasets": [
                 {"slug": "svident-dev", "task": "svident-detection", "title": "SV-Ident dev",
                  "reference": sv["dev"][0].name, "public": [sv["dev"][1].name],
                  "quotas": [{"limit": 200, "window": "week"}]},
                 {"slug": "rcc-dev", "task": "rcc-citations", "title": "RCC dev",
                  "reference": rref.name, "public": [rpub.name],
                  "quotas": [{"limit": 200, "window": "week"}]}]},
            {"slug": "evaluation", "title": "Evaluation (blind)", "start": iso(now - day),
             "end": iso(now + 14 * day), "blind": True, "leaderboard": "public", "datasets": [
                 {"slug": "svident-eval", "task": "svident-detection", "title": "SV-Ident eval",
                  "reference": sv["eval"][0].name, "public": [sv["eval"][1].name],
                  "quotas": [{"limit": 5, "window": "phase"}]}]}],
        "baselines": [
            {"team": "Baseline: keyword rule", "phase": "development", "dataset": "svident-dev",
             "file": sv["dev"][2].name, "description": "sentence mentions a survey keyword",
             "factsheet": {"method": "Keyword rule"}},
            {"team": "Baseline: keyword rule", "phase": "evaluation", "dataset": "svident-eval",
             "file": sv["eval"][2].name, "description": "sentence mentions a survey keyword",
             "factsheet": {"method": "Keyword rule"}},
            {"team": "Baseline: reference system", "phase": "development",
             "dataset": "svident-dev", "file": sv["dev"][3].name,
             "description": REFERENCE_SYSTEM,
             "factsheet": {"method": "Reference system, held-out model"}},
            {"team": "Baseline: reference system", "phase": "evaluation",
             "dataset": "svident-eval", "file": sv["eval"][3].name,
             "description": REFERENCE_SYSTEM,
             "factsheet": {"method": "Reference system, held-out model"}},
            {"team": "Baseline: most cited datasets", "phase": "development",
             "dataset": "rcc-dev", "file": rbase.name,
             "description": "the training part's 3 most cited datasets for every publication, "
                            "scored by the share of publications citing them",
             "factsheet": {"method": "Most cited datasets"}}],
    }
    # code submissions and an organizer-scored task (demo_code.py)
    from shareval.platform.demo_code import add_to_bundle
    add_to_bundle(bundle, data, out)
    (out / "bundle.yaml").write_text(yaml.safe_dump(bundle, sort_keys=False))
    return out


def _material_demo(home: Path, users: dict, console) -> None:
    """The MATERIAL competition (platform/demo_material), built once beside ``demo``."""
    import time

    from django.utils import timezone

    from shareval.platform.competitions.models import Competition
    from shareval.platform.demo_material import bundle, server
    if Competition.objects.filter(slug=bundle.SLUG).exists():
        return
    console.print(f"building the {bundle.SLUG} competition (synthetic MATERIAL period) ...")
    start = time.monotonic()
    server.build_competition(home, users, timezone.now(), console)
    console.print(f"{bundle.SLUG} built in {time.monotonic() - start:.1f} s")


def _workbench_demo(data: Path | None, users: dict, console) -> None:
    """The annotation projects of the demo competition (platform/demo_workbench)."""
    from shareval.platform.competitions.models import Competition
    from shareval.platform.demo_workbench.build import build_projects
    comp = Competition.objects.filter(slug="demo").first()
    if comp is None or data is None or not (data / "rcc" / "train" / "texts").is_dir():
        return
    build_projects(comp, data, users, console)


def _kbp_demo(home: Path, data: Path | None, users: dict, console) -> None:
    """The KBP competition (platform/demo_kbp) on Re-DocRED, when ../shared/data has it."""
    import time

    from django.utils import timezone

    from shareval.platform.competitions.models import Competition
    from shareval.platform.demo_kbp import bundle, server
    if Competition.objects.filter(slug=bundle.SLUG).exists():
        return
    kbp = data / "kbp" if data is not None else None
    if kbp is None or not (kbp / "re-docred-dev.json").is_file():
        console.print(f"{bundle.SLUG} not built: Re-DocRED is not in {kbp} "
                      f"(../shared/data/kbp)", markup=False)
        return
    console.print(f"building the {bundle.SLUG} competition (Re-DocRED, judged runs) ...")
    start = time.monotonic()
    server.build_competition(home, kbp, users, timezone.now(), console)
    console.print(f"{bundle.SLUG} built in {time.monotonic() - start:.1f} s")


def _print_kbp(base: str, home: Path, console) -> None:
    from shareval.platform.competitions.models import Competition
    from shareval.platform.demo_kbp import bundle, server
    if not Competition.objects.filter(slug=bundle.SLUG).exists():
        return
    pages = server.urls(base)
    console.print(f"\n[bold]{bundle.TITLE}[/bold] on {pages[0]}  (files in "
                  f"{home / bundle.SLUG})")
    console.print(f"  Leaderboard (judged F1 with intervals): {pages[1]}", markup=False)
    console.print(f"  Relation items for the judge account and the last recall document for "
                  f"the annotator account: {base}/work/; alice's next run to send: "
                  f"{home / bundle.SLUG / 'runs' / 'alpha-2.tsv'}", markup=False)


def _print_material(base: str, home: Path, console) -> None:
    from shareval.platform.demo_material import bundle, server
    pages = server.urls(base)
    console.print(f"\n[bold]{bundle.TITLE}[/bold] on {pages[0]}  (files in "
                  f"{home / 'material-demo'})")
    console.print("  Leaderboards: " + ", ".join(pages[1:]), markup=False)
    console.print(f"  Summary judging (3 judges per summary; simulated judges answered all but "
                  f"4 per campaign, left to the judge account): {base}/work/; organizers "
                  f"publish the judged scores at {base}/c/{bundle.SLUG}/organize/campaigns/",
                  markup=False)
    console.print(f"  Official tables (primary runs per language): "
                  f"{base}/c/{bundle.SLUG}/results/evaluation-week/", markup=False)
    console.print(f"  Team Gamma (carol) sent no primary run in the evaluation week: the "
                  f"organizer's page names it ({base}/c/{bundle.SLUG}/organize/)", markup=False)


def run_demo_server(args, console) -> int:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from shareval.platform.server import migrate, serve
    from shareval.platform.bundles.loader import load_bundle
    from shareval.platform.competitions.models import Competition, Membership, Team
    from shareval.platform.submissions.queue import drain
    migrate()
    home = Path(settings.HOME)
    accounts_file = home / "demo-accounts.json"
    accounts = json.loads(accounts_file.read_text()) if accounts_file.exists() else {}
    if set(accounts) != {name for name, _, _ in ACCOUNTS}:      # new, or an older demo's
        accounts = {name: accounts.get(name) or new_password()
                    for name, _, _ in ACCOUNTS}
        accounts_file.write_text(json.dumps(accounts))
        accounts_file.chmod(0o600)
    User = get_user_model()
    users = {}
    for name, organizer, _ in ACCOUNTS:
        u, created = User.objects.get_or_create(username=name)
        if created:
            u.set_password(accounts[name])
            u.is_staff = organizer
            # reminders and notices have somewhere to go (printed by the default mail
            # backend; .invalid is never delivered)
            u.email = f"{name}@demo.invalid"
            u.save()
        users[name] = u
    if not Competition.objects.filter(slug="demo").exists():
        data = _find_data(args.data)
        console.print(f"building the demo competition from {data} ...")
        root = build_bundle(data, home / "demo-bundle", timezone.now(),
                            log=lambda text: console.print(text, markup=False))
        comp, made = load_bundle(root, users["organizer"])
        teams = {}
        for name, _, team in ACCOUNTS:
            if team in DEMO_TEAMS:
                t = teams[team] = Team.objects.create(competition=comp, name=team,
                                                      lead=users[name])
                Membership.objects.create(team=t, user=users[name], status=Membership.APPROVED)
        console.print(f"scoring {len(made)} baseline submissions ...")
        drain()
        console.print("the teams' runs and the judging campaigns ...")
        set_up_judging(comp, users, teams, team_runs(data, root), console)
    _workbench_demo(find_data_or_none(args.data), users, console)
    _material_demo(home, users, console)
    _kbp_demo(home, find_data_or_none(args.data), users, console)
    n = drain()
    if n:
        console.print(f"scored {n} submissions")
    base = f"http://{args.host}:{args.port}"
    console.print(f"\n[bold]shareval demo[/bold] on {base}/c/demo/  (data in {home})")
    console.print(f"Splits: {SPLITS}", markup=False)
    for name, organizer, team in ACCOUNTS:
        role = "organizer (staff; admin at /admin/)" if organizer else f"lead of {team}" + \
            ("" if team in DEMO_TEAMS else " (material-demo only)") \
            if team else f"{name} (no team): {base}/work/"
        console.print(f"  {name:<10} password {accounts[name]:<14} {role}")
    console.print("Leaderboards: " + ", ".join(
        f"{base}/c/demo/leaderboard/{p}/{d}/" for p, d in
        (("development", "svident-dev"), ("development", "rcc-dev"),
         ("evaluation", "svident-eval"))))
    console.print(f"Annotation: {base}/c/demo/workbench/ (annotator and judge code RCC "
                  f"publication–data set pairs and SV-Ident sentences; organizer curates)",
                  markup=False)
    _print_material(base, home, console)
    _print_kbp(base, home, console)
    from shareval.platform.demo_code import rcc_system_bundle
    example = rcc_system_bundle(home / "demo-rcc-system",
                                _find_data(args.data) / "rcc/catalog/dataset_text_dict.json")
    console.print(f"Code submissions: the RCC reference system as a bundle in {example};\n"
                  f"  as alice: shareval submit --code {example} -c demo -p development "
                  f"-t rcc-code --server {base}", markup=False)
    if args.no_serve:
        return 0
    console.print("Ctrl-C stops the server.")
    serve(args.host, args.port)
    return 0
