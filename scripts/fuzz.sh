#!/usr/bin/env bash
# Fuzzes the whole check/format/render pipeline with libFuzzer for SECONDS (default 600).
#   scripts/fuzz.sh [SECONDS]
# The seed corpus is every example, fixture and conformance vector. cargo-fuzz needs nightly
# features; RUSTC_BOOTSTRAP lets the stable toolchain provide them.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-600}
command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
corpus=fuzz/corpus/check
mkdir -p "$corpus"
for file in examples/*.json crates/llmtool-core/tests/fixtures/*/*.json conformance/vectors/*.json; do
  cp "$file" "$corpus/seed-$(basename "$(dirname "$file")")-$(basename "$file")"
done
export RUSTC_BOOTSTRAP=1
cd fuzz
cargo fuzz run check "corpus/check" -- -max_total_time="$SECONDS_TO_RUN" -max_len=65536 -rss_limit_mb=2048 -print_final_stats=1
