#!/usr/bin/env bash
# Set up .venv and rebuild every dataset from data/raw with DVC, offline, then print
# the per-benchmark figures.
set -euo pipefail
source "$(dirname "$0")/_env.sh" ""
echo "==> dvc repro"
dvc repro
echo
curate summary
