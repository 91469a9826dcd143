#!/usr/bin/env bash
# `llmtool check` against ajv on the same 10,000 generated tool files, side by side in one run.
#
#   bench/check.sh [N=10000] [RUNS=5]
#
# llmtool does every semantic check (placeholders, defaults, avatar decoding, ...); ajv checks
# the JSON Schema only. Both run as one process over the whole directory. Prints the median wall
# time of each over RUNS runs, and the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10000}
RUNS=${2:-5}
# The corpus of the figures in docs/benchmarks.md comes from the team's shared generator; where
# it is not checked out, the repository's own (bench/corpus.py) writes one of the same kind.
if [ -z "${GEN_CORPUS:-}" ]; then
  GEN_CORPUS=../shared/bench/gen_corpus.py
  [ -f "$GEN_CORPUS" ] || GEN_CORPUS=bench/corpus.py
fi
CORPUS=bench/out/corpus-$N

cargo build --release -q -p llmtool
(cd bench && npm install --no-audit --no-fund --silent)
if [ ! -d "$CORPUS" ]; then
  python3 "$GEN_CORPUS" "$CORPUS" "$N" 7
fi
echo "corpus: $(ls "$CORPUS" | wc -l) files, $(du -sh "$CORPUS" | cut -f1); cores: $(nproc)"

python3 bench/timing.py "$RUNS" \
  "llmtool check=target/release/llmtool check $CORPUS" \
  "ajv (node $(node --version))=node bench/ajv-validate.mjs schema/llm-tool.schema.json $CORPUS"
