#!/usr/bin/env bash
# Refresh the dependency locks that scripts/run.sh and scripts/test.sh install from
# (through scripts/_env.sh): requirements/test.txt (extras dev,bayes,inspect) and
# requirements/run.txt (no extras, pinned to the same versions as test.txt). Both are
# universal (every platform and Python >= 3.11) and hashed. Run it after changing a
# dependency in pyproject.toml, or to move to newer releases (then run `dvc repro` and
# commit dvc.lock: the committed outputs are byte-identical only on the locked versions).
#   bash scripts/lock.sh            # keep the locked versions where pyproject still allows them
#   bash scripts/lock.sh --upgrade  # newest versions the ranges in pyproject.toml allow
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if .venv/bin/python -m uv --version >/dev/null 2>&1; then
  uv=(.venv/bin/python -m uv)  # scripts/_env.sh installs uv into .venv
elif "$PYTHON" -m uv --version >/dev/null 2>&1; then
  uv=("$PYTHON" -m uv)
elif command -v uv >/dev/null 2>&1; then
  uv=(uv)
else
  echo "scripts/lock.sh needs uv: $PYTHON -m pip install uv" >&2
  exit 1
fi
# --fork-strategy fewest: one version of a package for every Python where one exists,
# so a 3.11 and a 3.13 machine run the same numpy and write the same outputs.
common=(--generate-hashes --universal --fork-strategy fewest --python-version 3.11 --quiet)
"${uv[@]}" pip compile pyproject.toml --extra dev --extra bayes --extra inspect \
  "${common[@]}" "$@" -o requirements/test.txt
"${uv[@]}" pip compile pyproject.toml -c requirements/test.txt "${common[@]}" -o requirements/run.txt
echo "requirements/test.txt: $(grep -c '==' requirements/test.txt) pins; requirements/run.txt: $(grep -c '==' requirements/run.txt) pins"
