#!/usr/bin/env bash
# Opt-in end-to-end test with REAL local models (llama.cpp, CPU only, no key):
# on a 20-item GSM8K slice, `dvc repro` collect -> annotate -> one BenchFill insertion ->
# judge in a scratch clone with params.local.yaml merged in, then `curate review seed`;
# asserts every stage completed, every record says source "collected", a rerun makes 0
# new calls, and prints: stage | calls | parsed ok | failures by reason | seconds.
#
# Needs `bash scripts/local-models.sh install` first (built once, cached outside the repo).
# Without the cached binary and weights it prints why and exits 0 (that check is all CI
# does when they are absent). Everything model-related runs at nice 19.
#
#   bash scripts/test-real-model.sh            # KEEP=1 keeps the scratch folder
#   USE_RUNNING_ENDPOINTS=1 ...                # use the BENCHCURATE_LOCAL_*_URL already exported
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
LM="$REPO/scripts/local-models.sh"
PY="${PYTHON:-python}"
export DVC_NO_ANALYTICS=1 HF_HUB_OFFLINE=1 TQDM_DISABLE=1
STARTED=0
if [[ "${USE_RUNNING_ENDPOINTS:-0}" == 1 ]]; then
  # endpoints already exported by the caller (e.g. servers started by hand)
  : "${BENCHCURATE_LOCAL_QWEN05_URL:?}" "${BENCHCURATE_LOCAL_SMOLLM2_URL:?}" "${BENCHCURATE_LOCAL_GEMMA_URL:?}"
else
  if ! bash "$LM" paths >/dev/null 2>&1; then
    echo "test-real-model: skipped (no cached llama-server/weights; run: bash scripts/local-models.sh install)"
    exit 0
  fi
  eval "$(bash "$LM" env)"
  if [[ "$(bash "$LM" status | grep -cE '^(smollm2|qwen05|gemma) .*healthy')" != 3 ]]; then
    bash "$LM" start
    STARTED=1
  fi
fi
export BENCHCURATE_LOCAL_KEY="${BENCHCURATE_LOCAL_KEY:-EMPTY}"
WORK="$(mktemp -d /tmp/benchcurate-real.XXXXXX)"
cleanup() {
  [[ "$STARTED" == 1 ]] && bash "$LM" stop || true
  [[ "${KEEP:-0}" == 1 ]] && echo "scratch kept: $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT
git -C "$REPO" worktree list >/dev/null
git clone -q --no-hardlinks "$REPO" "$WORK/p"
# uncommitted work of the caller's tree is what we test: copy the tracked files over
git -C "$REPO" ls-files -z | (cd "$REPO" && xargs -0 cp --parents -t "$WORK/p" 2>/dev/null) || true
cd "$WORK/p"
export PYTHONPATH="$WORK/p"  # this tree's code, not an installed copy
"$PY" scripts/merge_params.py "$REPO/params.yaml" "$REPO/params.local.yaml" > params.yaml
RUN_DIR="${BENCHCURATE_CACHE:-$HOME/.cache/benchcurate}/llama/run"
# llama-server logs no request lines by default; every completion starts a slot task
log_calls() { cat "$RUN_DIR"/{smollm2,qwen05,gemma}.log 2>/dev/null | grep -c 'launch_slot_' || true; }
: > "$WORK/times.tsv"
stage() { # stage NAME CMD...: run at nice 19, record its wall time
  local name="$1" t0; shift
  t0=$(date +%s.%N)
  echo "==> $name: $*"
  nice -n 19 "$@"
  printf '%s\t%s\n' "$name" "$(echo "$(date +%s.%N) - $t0" | bc)" >> "$WORK/times.tsv"
}
before=$(log_calls)
stage ingest dvc repro -q -s ingest@gsm8k
stage collect dvc repro -q -s responses@gsm8k
stage annotate dvc repro -q -s annotate@gsm8k
stage fill dvc repro -q -s fill@gsm8k
stage judge dvc repro -q -s judge@gsm8k
stage review-seed curate review seed --params params.yaml
first=$(log_calls)
# the first run's metrics feed the table; the rerun's (written over them) prove 0 calls
cp -r metrics "$WORK/metrics.first"
# rerun everything from the cache: no request may reach a server
cp "$WORK/times.tsv" "$WORK/times.first.tsv"
dvc repro -q -f -s responses@gsm8k >/dev/null
dvc repro -q -f -s fill@gsm8k >/dev/null
dvc repro -q -f -s judge@gsm8k >/dev/null
again=$(log_calls)
"$PY" - "$WORK/times.first.tsv" "$before" "$first" "$again" "$WORK/metrics.first" <<'PYEOF'
import json, sys
import polars as pl

times = dict(line.split("\t") for line in open(sys.argv[1]).read().splitlines())
before, first, again = (int(x) for x in sys.argv[2:5])
m1 = sys.argv[5]
b = "gsm8k"
col = json.load(open(f"{m1}/collect/{b}.json"))
fil = json.load(open(f"{m1}/fill/{b}.json"))
jud = json.load(open(f"{m1}/judge/{b}.json"))
irt = json.load(open(f"{m1}/irt/{b}.json"))
rerun = {k: json.load(open(f"metrics/{k}/{b}.json")) for k in ("collect", "fill", "judge")}
samples = pl.read_parquet(f"data/collect/{b}.samples.parquet")
resp = pl.read_parquet(f"data/responses/{b}.parquet")
cands = pl.read_parquet(f"data/fill/{b}/candidates.parquet")
items = pl.read_parquet(f"data/items/{b}.parquet")
problems = []
if items.height != 20:
    problems.append(f"expected the 20-item slice, got {items.height}")
for name, frame in (("samples", samples), ("responses", resp)):
    if set(frame["source"]) != {"collected"}:
        problems.append(f"{name} source {sorted(set(frame['source']))}, not collected only")
bf = cands.filter(pl.col("method") == "benchfill")
if set(bf["source"]) - {"collected"}:
    problems.append(f"candidates source {sorted(set(bf['source']))}")
# the rerun (forced) made no call: stage metrics describe the last run
for name, n in (
    ("collect", rerun["collect"]["requests"]),
    ("fill", rerun["fill"]["run"]["requests"]),
    ("judge", rerun["judge"]["requests"]),
):
    if n:
        problems.append(f"rerun of {name} made {n} requests")
if again != first:
    problems.append(f"server logs: {again - first} requests during the rerun")
out = col["output"]
bfm = fil["methods"]["benchfill"]
jcalls = jud["requests"] + jud["cache_hits"]
rows = [
    ("collect", f"{col['requests']}", f"{out['n_parsed']}/{col['n_samples']} answers",
     {"max_tokens": out["n_truncated"], **out["ungraded"]}, times.get("collect")),
    ("annotate", "0", f"{irt['n_models']} models x {irt['n_items']} items",
     {"loo": "skipped" if irt["loo"] is None else "done"}, times.get("annotate")),
    ("fill", f"{fil['run']['requests']} (rewriter {bfm['rewriter_calls']}, judge {fil['run'].get('judge_requests', 0)})",
     f"{bfm['n_candidates'] - sum(bfm['failure_reasons'].values())}/{bfm['n_candidates']} passed the checks; "
     f"{bfm['n_inserted']} inserted; {bfm['by_status']}",
     bfm["failure_reasons"], times.get("fill")),
    ("judge", f"{jud['requests']} new + {jud['cache_hits']} cached (fill's)" if jud["cache_hits"] else f"{jcalls}",
     f"{jud['n_passed']}/{jud['n_judged']} passed",
     {**{k: v for k, v in jud["unjudged"].items() if v}, "repairs": jud["repairs"], "tolerant": jud["tolerant_reads"]},
     times.get("judge")),
    ("review-seed", "0", "-", {}, times.get("review-seed")),
]
print()
print("stage | calls | parsed ok | failures by reason | seconds")
print("--- | --- | --- | --- | ---")
for name, calls, ok, fails, secs in rows:
    f = ", ".join(f"{k} {v}" for k, v in fails.items()) or "-"
    print(f"{name} | {calls} | {ok} | {f} | {float(secs or 0):.0f}")
print(f"\nserver log requests: first run {first - before}, rerun {again - first}")
if problems:
    print("FAILED:\n  " + "\n  ".join(problems))
    sys.exit(1)
print("real-model test: all stages completed; records collected; rerun made 0 calls")
PYEOF
