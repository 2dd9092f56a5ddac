#!/usr/bin/env bash
# Set up .venv and rebuild every dataset from data/raw with DVC, offline, then print
# the per-benchmark figures.
set -euo pipefail
source "$(dirname "$0")/_env.sh" ""
echo "==> dvc repro"
if [ -n "$(dvc remote list 2>/dev/null)" ]; then
  dvc repro
else
  # DVC ends every run that changed something with a `dvc push` hint, remote or not;
  # without a remote there is nothing to push (README: "Sharing results")
  dvc repro | { grep -v --line-buffered '^Use `dvc push` to send your updates to remote storage\.$' || true; }
fi
echo
curate summary
