#!/usr/bin/env bash
# Set up .venv with the dev and Bayesian extras, then lint and run the test suite.
# Extra arguments go to pytest. Exit code 5 (no tests collected) is a failure.
set -euo pipefail
source "$(dirname "$0")/_env.sh" "dev,bayes"
echo "==> ruff check"
ruff check .
echo "==> pytest"
set +e
python -m pytest -n 2 "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: failing on purpose" >&2
  exit 1
fi
exit "$status"
