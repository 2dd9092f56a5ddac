# Shared by scripts/run.sh and scripts/test.sh: create .venv with the project installed.
# Needs only python3 (>= 3.11) and git. Re-running is quick: pip skips what is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
EXTRAS="${1:-}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "benchcurate needs Python >= 3.11 (found: $("$PYTHON" --version 2>&1)); set PYTHON=..." >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv"
  "$PYTHON" -m venv .venv
fi
# The versions come from a lock, not from the newest releases the ranges in pyproject.toml
# allow: the committed dvc.lock is byte-identical only on the same numpy/scipy/polars/pyarrow.
# requirements/run.txt for `run.sh` (no extras), requirements/test.txt for any extras (a
# superset at the same versions); both hashed. Refresh them with scripts/lock.sh.
if [ -z "$EXTRAS" ]; then lock=requirements/run.txt; else lock=requirements/test.txt; fi
stamp=".venv/.installed${EXTRAS:+-$EXTRAS}"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ "$lock" -nt "$stamp" ]; then
  echo "==> installing benchcurate${EXTRAS:+[$EXTRAS]} into .venv from $lock (first time: under a minute with uv, minutes with pip)"
  # uv installs the same locked versions as pip in a tenth of the time: a fresh .venv with dev,bayes,inspect took 231 s with pip, 20 s with uv
  # (uv itself from the registry: 3 s). pip stays the fallback when uv cannot be had.
  # --compile-bytecode: pip writes .pyc files at install, uv only when asked; without them
  # every process (each DVC stage, dvc, curate) compiles its imports again where
  # PYTHONDONTWRITEBYTECODE is set, and the shared DVC build took 188 s instead of ~50.
  # The project itself goes in with --no-deps: its dependencies are exactly the lock's.
  if .venv/bin/python -m pip install --quiet --disable-pip-version-check uv >/dev/null 2>&1 &&
    .venv/bin/python -m uv pip install --quiet --compile-bytecode --python .venv/bin/python \
      --require-hashes -r "$lock" &&
    .venv/bin/python -m uv pip install --quiet --compile-bytecode --python .venv/bin/python \
      --no-deps -e .; then
    :
  else
    echo "    (uv unavailable or failed: installing with pip)"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
    # --no-deps: the lock is the whole closure (and pip in hash mode rejects a dependency
    # named with an extra, such as dvc-http's fsspec[http], as "not pinned")
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps \
      --require-hashes -r "$lock"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
  fi
  touch "$stamp"
fi
# shellcheck disable=SC1091
source .venv/bin/activate
# Nothing here talks to the network: no DVC analytics, no Hugging Face Hub.
export DVC_NO_ANALYTICS=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1
