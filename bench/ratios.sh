#!/usr/bin/env bash
# Every speed goal of docs/benchmarks.md against its peer, one after the other in one run:
#   - `llmtool check` against ajv (bench/check.sh, 10,000 files);
#   - rendering against minijinja (`cargo bench --bench render`);
#   - the library's reads against nginx, and its searches on SQLite and PostgreSQL
#     (bench/registry.py);
#   - MCP `prompts/get` against the MCP Python SDK (bench/mcp.sh);
#   - rows decoded together on the local model, `batch -j 8` against `-j 1` on SmolLM2 and
#     Qwen2.5-Coder-0.5B (bench/batch_local.py; both models pulled);
#   - the local model's prompt and decode speed against llama.cpp on Qwen2.5-Coder-1.5B
#     (bench/local_decode.py; the model pulled, llama.cpp installed by scripts/independent.py);
#   - the figures with a goal but no peer: spend and run history at RUNS runs
#     (bench/spend.py), the sidebar at PER_MEMBER conversations for each of 100 members
#     (bench/sidebar.py).
# Each prints its own figures as it goes; the lines with the ratios are repeated at the end.
#
#   bench/ratios.sh [SECONDS=10] [RUNS=1000000] [PER_MEMBER=10000]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-10}
RUNS=${2:-1000000}
PER_MEMBER=${3:-10000}
MODELS=${LLMTOOL_MODELS_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/llmtool/models}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== check against ajv"
bench/check.sh 10000 7 | tee "$out/check"
echo "== render against minijinja"
cargo bench -q -p llmtool-format --bench render 2>/dev/null | tee "$out/render"
echo "== the library: reads against nginx, and searches"
python3 bench/registry.py "$SECONDS_EACH" 10000 | tee "$out/registry"
echo "== MCP prompts/get against the Python SDK"
bench/mcp.sh 64 "$SECONDS_EACH" | tee "$out/mcp"
echo "== rows decoded together on the local model"
python3 bench/batch_local.py 64 3 | tee "$out/batch_local"
echo "== the local model against llama.cpp, Qwen2.5-Coder-1.5B"
python3 bench/local_decode.py "$MODELS/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf" 2 | tee "$out/local_decode"
echo "== spend and run history at $RUNS runs"
python3 bench/spend.py "$RUNS" 30 | tee "$out/spend"
echo "== the sidebar at $PER_MEMBER conversations a member"
python3 bench/sidebar.py "$PER_MEMBER" 100 30 | tee "$out/sidebar"

echo
echo "== the ratios, together"
grep -E "x the first" "$out/check"
python3 - "$out/render" <<'PY'
import re, sys
unit = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}
median = {}
for line in open(sys.argv[1], encoding="utf-8"):
    found = re.match(r"\W+(\w+)_(llmtool|minijinja)\s+(.*)", line)
    if found:
        value, scale = found.group(3).split("│")[2].split()
        median[found.group(1), found.group(2)] = float(value) * unit[scale]
for case in sorted({case for case, _ in median}):
    ours, theirs = median[case, "llmtool"], median[case, "minijinja"]
    print(f"render, {case} prompt: llmtool {theirs / ours:.1f}x faster than minijinja (medians)")
PY
grep -E "throughput .*x nginx|^search over|repeated|each" "$out/registry"
grep -E "^throughput|^p50" "$out/mcp"
grep -E "rows decoded together" "$out/batch_local"
grep -E "^best:" "$out/local_decode"
grep -E " p50 " "$out/spend" "$out/sidebar"
