"""The organizers' report at SV-Ident size (issue 40: the whole report of 20 teams x 5
runs x 3 datasets in <= 30 s, from stored per-unit statistics, no submission read).

Three svident-detection datasets share the shared SV-Ident training data as their
reference (3,823 sentences, 30 documents in English and German; with per-annotator
columns added, so the agreement table and the per-annotator breakdowns are made too).
Each of 20 teams sends 5 runs per dataset (its primary and 4 contrastive runs): the
reference with a share of labels flipped (each run its own share and seed). The runs
are scored once by the real scorer and stored as the server stores them (result and
per-unit statistics); that set-up is timed apart. Then ``build`` + ``write`` of the
report (tables, significance across all pairs, figures as PNG and PDF) is timed: each
team's primary, then every run (100 per dataset: 4,950 pairs each).

    PYTHONPATH=src python bench/report.py [--data ../shared/data] [--samples 10000]
"""
import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0]) == HERE:
    sys.path.pop(0)
sys.path.append(HERE)
from _pages import start_django  # noqa: E402

TEAMS, RUNS, DATASETS = 20, 5, 3
ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--data", default=None)
ap.add_argument("--samples", type=int, default=10_000)
args = ap.parse_args()
os.environ["SHAREVAL_HOME"] = tempfile.mkdtemp(prefix="shareval-report-")
os.environ.setdefault("SHAREVAL_LOG", "WARNING")
from shareval.demo import find_data  # noqa: E402

data = find_data(args.data)
train = data / "sv-ident" / "train" / "train.tsv" if data else None
if train is None or not train.is_file():
    print(f"skipped: the SV-Ident training data is not in {train}")
    sys.exit(0)
home = Path(start_django())
from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402

from shareval.platform.competitions.models import (Competition, CompetitionTask,  # noqa: E402
                                                   Dataset, Phase, Team)
from shareval.platform.reports.build import build  # noqa: E402
from shareval.platform.reports.output import write  # noqa: E402
from shareval.platform.submissions.models import Score, Submission  # noqa: E402
from shareval.tasks import get  # noqa: E402


def with_annotators(src: Path) -> str:
    """The reference plus two annotators: A1 as the gold, A2 flips 10% of is_variable."""
    rng = random.Random(1)
    lines = src.read_text().splitlines()
    out = [lines[0] + "\tis_variable@A1\tvariable@A1\tis_variable@A2\tvariable@A2"]
    head = lines[0].split("\t")
    iv, var = head.index("is_variable"), head.index("variable")
    for line in lines[1:]:
        f = line.split("\t")
        a2 = f[iv] if rng.random() > 0.1 else str(1 - int(f[iv]))
        v2 = f[var] if a2 == f[iv] else ("" if a2 == "0" else "unk")
        out.append(line + f"\t{f[iv]}\t{f[var]}\t{a2}\t{v2}")
    return "\n".join(out) + "\n"


t0 = time.perf_counter()
private = Path(settings.PRIVATE_DIR)
private.mkdir(parents=True, exist_ok=True)
(private / "ref.tsv").write_text(with_annotators(train))
task = get("svident-detection")
ref = task.reference(str(private / "ref.tsv"))
gold = {u: int(s.is_variable) for u, s in ref.sentences.items()}
org = get_user_model().objects.create_user("org", password="x", is_staff=True)
comp = Competition.objects.create(slug="bench", title="Report bench")
comp.organizers.add(org)
ct = CompetitionTask.objects.create(competition=comp, slug="t1", task_name="svident-detection")
import datetime as dt  # noqa: E402

now = dt.datetime.now(dt.timezone.utc)
phase = Phase.objects.create(competition=comp, slug="test", title="Test",
                             start=now - dt.timedelta(days=9), end=now - dt.timedelta(days=1))
sets = [Dataset.objects.create(phase=phase, task=ct, slug=f"set{i}", reference_path="ref.tsv")
        for i in range(DATASETS)]
teams = [Team.objects.create(competition=comp, name=f"Team {i:02d}", lead=org)
         for i in range(TEAMS)]
runs_dir = home / "runs"
runs_dir.mkdir()
n = 0
for d_i, ds in enumerate(sets):
    for t_i, team in enumerate(teams):
        for r in range(RUNS):
            rng = random.Random(f"{d_i}-{t_i}-{r}")
            flip = 0.15 + 0.02 * t_i + 0.01 * r
            path = runs_dir / f"{d_i}-{t_i}-{r}.tsv"
            path.write_text("uuid\tis_variable\n" + "".join(
                f"{u}\t{g if rng.random() > flip else 1 - g}\n" for u, g in gold.items()))
            run = task.submission(str(path), ref)
            result = task.score(ref, run).to_dict()
            stats = task.unit_stats(ref, run).to_dict()
            s = Submission.objects.create(team=team, dataset=ds, state=Submission.SCORED,
                                          kind=Submission.PRIMARY if r == 0 else
                                          Submission.CONTRASTIVE, original_name=path.name,
                                          stored_name="")
            Score.objects.create(submission=s, scorer_version=task.scorer_version,
                                 reference_digest="d", result=result,
                                 primary=result["metrics"]["f1_macro"], unit_stats=stats)
            n += 1
setup = time.perf_counter() - t0
print(f"set-up: {n} runs scored and stored in {setup:.1f} s (not part of the report's time); "
      f"{len(ref.sentences)} sentences, {len(stats['units'])} units per run")

print(f"{'report':<28}{'tables':>8}{'figures':>9}{'seconds':>9}{'goal':>7}")
for which in ("primary", "all"):
    t = time.perf_counter()
    rep = build(comp, None, which, samples=args.samples)
    counts = write(rep, home / f"report-{which}")
    secs = time.perf_counter() - t
    label = f"{'primaries' if which == 'primary' else 'every run'} ({DATASETS} datasets)"
    print(f"{label:<28}{counts['tables']:>8}{counts['figures']:>9}{secs:>9.1f}"
          f"{'30 s' if which == 'primary' else '':>7}")
print(f"files in {home}")
