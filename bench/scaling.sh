#!/usr/bin/env bash
# How `llmtool check` and `llmtool render` grow with the number of variables: 10k, 100k and
# 1M variables (bench/gen_wide_tool.py), timed in interleaved rounds, with the time per
# variable, which stays flat when the growth is linear. With BEFORE=REV, the same is timed on
# the llmtool of that commit too (built in a worktree under bench/out), up to 100k variables.
#
#   bench/scaling.sh [RUNS=3]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
OUT=bench/out/scaling
mkdir -p "$OUT"
cargo build --release -q -p llmtool
for n in 10000 100000 1000000; do
  [ -f "$OUT/wide-$n.json" ] || python3 bench/gen_wide_tool.py "$n" "$OUT/wide-$n.json"
done
binaries=("now=target/release/llmtool")
if [ -n "${BEFORE:-}" ]; then
  tree=bench/out/before-$BEFORE
  [ -d "$tree" ] || git worktree add --detach "$tree" "$BEFORE"
  (cd "$tree" && CARGO_TARGET_DIR="$PWD/../../../target/before" cargo build --release -q -p llmtool)
  binaries+=("before=target/before/release/llmtool")
fi
for entry in "${binaries[@]}"; do
  label=${entry%%=*}
  binary=${entry#*=}
  for n in 10000 100000 1000000; do
    if [ "$label" = before ] && [ "$n" = 1000000 ]; then continue; fi
    file="$OUT/wide-$n.json"
    for command in check render; do
      python3 - "$RUNS" "$label" "$command" "$n" "$binary" "$file" <<'PY'
import statistics, subprocess, sys, time
runs, label, command, n, binary, path = int(sys.argv[1]), *sys.argv[2:]
times = []
for _ in range(runs):
    start = time.perf_counter()
    subprocess.run([binary, command, path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    times.append(time.perf_counter() - start)
median = statistics.median(times)
print(f"{label:<7} {command:<7} {int(n):>9,} variables  median {median * 1000:9.1f} ms  {median / int(n) * 1e6:8.2f} us per variable")
PY
    done
  done
done
