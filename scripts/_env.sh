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
stamp=".venv/.installed${EXTRAS:+-$EXTRAS}"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "==> installing benchcurate${EXTRAS:+[$EXTRAS]} into .venv (first time: under a minute with uv, minutes with pip)"
  # uv installs the same resolution as pip (same 209 packages, same versions) in a tenth
  # of the time: a fresh .venv with dev,bayes,inspect took 231 s with pip, 20 s with uv
  # (uv itself from the registry: 3 s). pip stays the fallback when uv cannot be had.
  # --compile-bytecode: pip writes .pyc files at install, uv only when asked; without them
  # every process (each DVC stage, dvc, curate) compiles its imports again where
  # PYTHONDONTWRITEBYTECODE is set, and the shared DVC build took 188 s instead of ~50.
  if .venv/bin/python -m pip install --quiet --disable-pip-version-check uv >/dev/null 2>&1 &&
    .venv/bin/python -m uv pip install --quiet --compile-bytecode --python .venv/bin/python \
      -e ".${EXTRAS:+[$EXTRAS]}"; then
    :
  else
    echo "    (uv unavailable or failed: installing with pip)"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${EXTRAS:+[$EXTRAS]}"
  fi
  touch "$stamp"
fi
# shellcheck disable=SC1091
source .venv/bin/activate
# Nothing here talks to the network: no DVC analytics, no Hugging Face Hub.
export DVC_NO_ANALYTICS=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1
