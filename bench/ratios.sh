#!/usr/bin/env bash
# Every speed goal of docs/benchmarks.md against its peer, one after the other in one run:
#   - `llmtool check` against ajv (bench/check.sh, 10,000 files);
#   - rendering against minijinja (`cargo bench --bench render`);
#   - the library's reads against nginx, and its searches on SQLite and PostgreSQL
#     (bench/registry.py);
#   - MCP `prompts/get` against the MCP Python SDK (bench/mcp.sh);
#   - rows decoded together on the local model, `batch -j 8` against `-j 1` on SmolLM2 and
#     Qwen2.5-Coder-0.5B (bench/batch_local.py; both models pulled).
# Each prints its own figures as it goes; the lines with the ratios are repeated at the end.
#
#   bench/ratios.sh [SECONDS=10]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-10}
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
