#!/usr/bin/env bash
# A conversation's follow-up on the local model: its time to first token when the engine
# starts from the turn before (`llmtool chat`, a server) against computing the whole history
# again, in one run. usage: bench/follow_up.sh [MODEL.gguf] [ROUNDS=5]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
model=${1:-$(cargo run -q -p llmtool -- model pull)}
cargo build --release -q -p llmtool-local --example follow_up_ttft
RAYON_NUM_THREADS=${THREADS:-2} target/release/examples/follow_up_ttft "$model" "${2:-5}"
