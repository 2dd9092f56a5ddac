#!/usr/bin/env bash
# Set up .venv with the dev, Bayesian and inspect extras, then lint, type-check and run the test suite.
# Extra arguments go to pytest. Exit code 5 (no tests collected) is a failure.
set -euo pipefail
source "$(dirname "$0")/_env.sh" "dev,bayes,inspect"
# The review page is tested in a real headless Chromium (Debian's). Install it when we
# can (root with apt, as in CI); otherwise those tests are skipped and say why.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> installing chromium for the browser tests (apt-get)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
      >/dev/null 2>&1 || echo "    could not install chromium: browser tests will be skipped"
  else
    echo "==> no chromium found: browser tests will be skipped (apt-get install chromium)"
  fi
fi
echo "==> ruff check"
ruff check .
echo "==> ruff format --check"
ruff format --check .
echo "==> mypy (curation/, pipelines/)"
python -m mypy
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
