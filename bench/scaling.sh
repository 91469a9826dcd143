#!/usr/bin/env bash
# How `llmtool check` and `llmtool render` grow with the number of variables: 10k, 100k and
# 1M variables (bench/gen_wide_tool.py), the median of RUNS interleaved rounds, with the time per
# variable, which stays flat when the growth is linear. With BEFORE=REV, the same is timed on
# the llmtool of that commit too (built in a worktree under bench/out), up to 100k variables.
#
#   BEFORE=ea6d882 bench/scaling.sh 3
#
#   bench/scaling.sh [RUNS=3]        (SKIP_BUILD=1 times the binaries already in bench/out)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
OUT=bench/out/scaling
mkdir -p "$OUT"
# A million variables is a 120 MB file, past the default limit on what llmtool reads.
export LLMTOOL_MAX_FILE_BYTES=1G
if [ -z "${SKIP_BUILD:-}" ]; then
  cargo build --release -q -p llmtool
  cp target/release/llmtool "$OUT/llmtool-now"
fi
for n in 10000 100000 1000000; do
  [ -f "$OUT/wide-$n.json" ] || python3 bench/gen_wide_tool.py "$n" "$OUT/wide-$n.json"
done
binaries=("now=$OUT/llmtool-now")
if [ -n "${BEFORE:-}" ]; then
  # The same target folder: only llmtool's own crates are built again.
  tree=bench/out/before-$BEFORE
  if [ -z "${SKIP_BUILD:-}" ]; then
    [ -d "$tree" ] || git worktree add --detach "$tree" "$BEFORE"
    (cd "$tree" && CARGO_TARGET_DIR="$OLDPWD/target" cargo build --release -q -p llmtool)
    cp target/release/llmtool "$OUT/llmtool-before"
  fi
  binaries+=("before=$OUT/llmtool-before")
fi
python3 - "$RUNS" "$OUT" "${binaries[@]}" <<'PY'
import statistics, subprocess, sys, time
runs, out, binaries = int(sys.argv[1]), sys.argv[2], [b.split("=", 1) for b in sys.argv[3:]]
for n in (10_000, 100_000, 1_000_000):
    path = f"{out}/wide-{n}.json"
    for command in ("check", "render"):
        # The old build is quadratic: 1M variables would not finish.
        timed = [(label, binary) for label, binary in binaries if label == "now" or n <= 100_000]
        times = {label: [] for label, _ in timed}
        for _ in range(runs):
            for label, binary in timed:
                start = time.perf_counter()
                done = subprocess.run([binary, command, path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                if done.returncode not in (0, 1):
                    sys.exit(f"{label} {command} {n}: {done.stderr.decode()[:300]}")
                times[label].append(time.perf_counter() - start)
        now = statistics.median(times["now"])
        for label, _ in timed:
            median = statistics.median(times[label])
            print(f"{label:<7} {command:<7} {n:>9,} variables  median {median * 1000:9.1f} ms"
                  f"  {median / n * 1e6:7.2f} us per variable  {median / now:7.1f}x now")
PY
