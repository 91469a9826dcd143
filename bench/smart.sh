#!/usr/bin/env bash
# A smart tool's run in llmtool's WebAssembly sandbox against the same `execute` in plain
# CPython, whole processes side by side in one run: cold (the runtime compiled for the
# machine in that run) and warm (the compiled runtime read from its cache).
#
#   bench/smart.sh [RUNS=10]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-10}
OUT=bench/out/smart
cargo build --release -q -p llmtool
mkdir -p "$OUT/warm" "$OUT/cold"
module=$(LLMTOOL_SANDBOX_DIR="$PWD/$OUT/warm" target/release/llmtool sandbox pull 2>/dev/null)
# The cold runs' folder holds the verified module and wasmtime's compiler (unpacked from its
# wheel), never the compiled form: each cold run compiles it.
cp "$module" "$OUT/warm/.python-3.12.0.wasm.verified" "$OUT/cold/"
rm -rf "$OUT/cold/compiler" && cp -a "$OUT/warm/compiler" "$OUT/cold/"
TOOL=bench/smart/word-stats.json
TEXT="text=$(python3 -c "print(' '.join('word%d' % (i * 7 % 113) for i in range(3000)))")"
echo "tool: $TOOL; python3: $(python3 --version 2>&1); cores: $(nproc)"
export LLMTOOL_NO_LOG=1
python3 bench/timing.py "$RUNS" \
  "plain CPython (python3 -I)=python3 -I bench/smart_plain.py $TOOL '$TEXT'" \
  "llmtool run, warm (compiled cache)=env LLMTOOL_SANDBOX_DIR=$OUT/warm target/release/llmtool run $TOOL --var '$TEXT'" \
  "llmtool run, cold (compiled in the run)=sh -c 'rm -rf $OUT/cold/compiled; LLMTOOL_SANDBOX_DIR=$OUT/cold exec target/release/llmtool run $TOOL --var \"\$0\"' '$TEXT'"
