#!/usr/bin/env bash
# `prompts/get` over Streamable HTTP: `llmtool mcp --http` against the official MCP Python SDK's
# `MCPServer` (bench/mcp/python_server.py) serving the same example prompts, loaded by the same
# generator (crates/llmtool-mcp/examples/mcp_load.rs), one after the other in one run.
#
#   bench/mcp.sh [CLIENTS=64] [SECONDS=30]
#
# Each of the CLIENTS opens its own session (`initialize`) and sends `prompts/get` for
# `teach_me_anything` back to back for SECONDS. Prints each server's throughput and p50/p99
# latency as JSON, and the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
CLIENTS=${1:-64}
SECONDS_EACH=${2:-30}
PYTHON_CLIENT="mcp==2.3.0"
VENV=${LLMTOOL_MCP_BENCH_VENV:-target/mcp-clients/venv}
ARGS='{"topic":"tides"}'

cargo build --release -q -p llmtool
cargo build --release -q -p llmtool-mcp --example mcp_load
if ! "$VENV/bin/python" -c "import mcp" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "$PYTHON_CLIENT"
fi
echo "cores: $(nproc); python: $("$VENV/bin/python" -c 'import importlib.metadata as m; print("mcp", m.version("mcp"))')"

wait_port() {
  for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "nothing listens on port $1" >&2
  exit 2
}

measure() { # NAME PORT COMMAND...
  local name=$1 port=$2
  shift 2
  "$@" >/dev/null 2>&1 &
  local pid=$!
  wait_port "$port"
  target/release/examples/mcp_load "http://127.0.0.1:$port/mcp" "$CLIENTS" "$SECONDS_EACH" teach_me_anything "$ARGS" \
    | tee "target/mcp-bench-$name.json"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}

measure llmtool 18765 target/release/llmtool mcp --http 127.0.0.1:18765 --log-level error examples
measure python 18766 "$VENV/bin/python" bench/mcp/python_server.py 18766 examples
python3 - <<'PY'
import json
ours, theirs = (json.load(open(f"target/mcp-bench-{n}.json")) for n in ("llmtool", "python"))
print(f"throughput: llmtool {ours['throughput_per_s']:.0f}/s, Python SDK {theirs['throughput_per_s']:.0f}/s: {ours['throughput_per_s'] / theirs['throughput_per_s']:.1f}x")
print(f"p50: {ours['p50_ms']:.2f} ms vs {theirs['p50_ms']:.2f} ms; p99: {ours['p99_ms']:.2f} ms vs {theirs['p99_ms']:.2f} ms ({theirs['p99_ms'] / ours['p99_ms']:.1f}x lower)")
print(f"errors: llmtool {ours['errors']}, Python SDK {theirs['errors']}")
PY
