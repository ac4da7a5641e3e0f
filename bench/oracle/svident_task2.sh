#!/usr/bin/env bash
# Builds the official SV-Ident 2022 Task 2 scorer in its own pinned environment, outside
# this repository, for the differential test tests/tasks/test_svident_ties.py:
#
#   bash bench/oracle/svident_task2.sh [DEST]      # DEST default: ../oracle-svident
#
# DEST/venv: Python 3.9 with the organizers' pins (requirements.eval.txt: ranx==0.2.8,
# scikit-learn==1.0.1) and numpy<2; DEST/evaluate_task2.py: the organizers' script at
# the commit below (vadis-project/sv-ident, scripts/evaluate_task2.py), checked by its
# sha256; DEST/data/val.tsv: the organizers' validation split (data/train/val.tsv, same
# commit), which ../shared/data does not have, for the real-data comparison. Needs python3.9 (PYTHON39=...), a package index (pip's configuration, a local
# mirror will do) and either the network or a git copy of the repository
# (SVIDENT_GIT_DIR=/path/to/sv-ident/.git). The test finds DEST through
# SHAREVAL_SVIDENT_ORACLE (default ../oracle-svident) and is skipped without it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest=${1:-${SHAREVAL_SVIDENT_ORACLE:-$here/../../../oracle-svident}}
python39=${PYTHON39:-python3.9}
commit=5b5f25f74a9cca803006aae255dccbb34b5489b9
sha256=2ffa1c0c1bd59a520661a6a71ec428d65efd3a44dfcb68bc8b6cf36eb5556824
data_commit=a8e71bba570f628c460e2b542d4cc645e4eb7d03
val_sha256=a5ec6da5d5fa6a56bda626aad0fe4b2546faed2cb6000cae43a0a787c1e041f0
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
[ -x "$dest/venv/bin/python" ] || "$python39" -m venv "$dest/venv"
"$dest/venv/bin/python" -m pip install --quiet 'ranx==0.2.8' 'scikit-learn==1.0.1' 'numpy<2'
"$dest/venv/bin/python" -m pip freeze > "$dest/freeze.txt"
script="$dest/evaluate_task2.py"
if [ -n "${SVIDENT_GIT_DIR:-}" ]; then
    git --git-dir "$SVIDENT_GIT_DIR" show "$commit:scripts/evaluate_task2.py" > "$script"
else
    curl -fsSL "https://raw.githubusercontent.com/vadis-project/sv-ident/$commit/scripts/evaluate_task2.py" \
        -o "$script"
fi
echo "$sha256  $script" | sha256sum -c --quiet -
mkdir -p "$dest/data"
if [ -n "${SVIDENT_GIT_DIR:-}" ]; then
    git --git-dir "$SVIDENT_GIT_DIR" show "$data_commit:data/train/val.tsv" > "$dest/data/val.tsv"
else
    curl -fsSL "https://raw.githubusercontent.com/vadis-project/sv-ident/$data_commit/data/train/val.tsv" \
        -o "$dest/data/val.tsv"
fi
echo "$val_sha256  $dest/data/val.tsv" | sha256sum -c --quiet -
# a first run compiles ranx's numba functions into its cache (a minute on a loaded machine)
printf '[{"qrels": {"u": {"a": 1}}, "run": "{\\"u\\": {\\"a\\": 1.0}}", "langs": {"u": "en"}, "docs": {"u": "d"}, "metrics": ["map@10"]}]' \
    > "$dest/warm.json"
"$dest/venv/bin/python" "$here/svident_task2_driver.py" "$script" "$dest/warm.json" "$dest/warm.out.json"
cat "$dest/warm.out.json"; echo
echo "oracle ready in $dest (numpy, numba, ranx versions in $dest/freeze.txt)"
