#!/usr/bin/env bash
# Fuzzes llmtool-format with libFuzzer for SECONDS (default 600) per target:
#   check        — any bytes through decode, parse, lower, every rule and renderer, fmt, render;
#   prompt_files — any text read as Prompty, Dotprompt, an `llm` template (YAML front matter
#                  and comment blocks) and Emacs Lisp.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# The seed corpora are every example, fixture and conformance vector, and the examples
# exported to each prompt-file format and to elisp. cargo-fuzz needs nightly features;
# RUSTC_BOOTSTRAP lets the stable toolchain provide them. LLMTOOL_FUZZ_SANITIZER picks
# cargo-fuzz's sanitizer (default address, which also checks llmtool-format's one unsafe block and
# the dependencies' unsafe code; the test command's 30-second smoke run uses none: panics,
# timeouts and memory blow-ups are what a short run finds, and the uninstrumented build is
# shorter). LLMTOOL_FUZZ_DEV=1 builds the targets unoptimised (cargo-fuzz's --dev): slower
# fuzzing, but a build of a minute or two instead of several (cargo-fuzz optimises with one
# codegen unit), which is what a 30-second smoke run wants.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-600}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(check prompt_files)
# cargo-fuzz is built once into .cache/tools (ignored), which a CI run may keep.
export PATH="$PWD/.cache/tools/bin:$PATH"
command -v cargo-fuzz >/dev/null || cargo install --locked --root .cache/tools cargo-fuzz

seed_check() {
  local corpus=fuzz/corpus/check
  mkdir -p "$corpus"
  for file in examples/*.json crates/llmtool-format/tests/fixtures/*/*.json crates/llmtool-convert/tests/fixtures/*/*.json conformance/vectors/*.json; do
    cp "$file" "$corpus/seed-$(basename "$(dirname "$file")")-$(basename "$file")"
  done
}

seed_prompt_files() {
  local corpus=fuzz/corpus/prompt_files
  mkdir -p "$corpus"
  # The test command has built it already (LLMTOOL_BUILT=1); a workspace build keeps the
  # tests' features, so nothing compiles again.
  [ "${LLMTOOL_BUILT:-}" = 1 ] || cargo build -q --workspace --bins --tests
  for tool in examples/*.json; do
    [[ $tool == *.tests.json ]] && continue
    for format in prompty dotprompt llm-template gptel llm-el; do
      "${LLMTOOL_BUILD_DIR:-target/debug}/llmtool" export "$tool" --to "$format" \
        > "$corpus/seed-$(basename "$tool" .json).$format" 2>/dev/null || true
    done
  done
  cp crates/llmtool-convert/tests/fixtures/convert/*.el "$corpus/"
}

# Only for cargo-fuzz (its own target folder): build scripts rerun when RUSTC_BOOTSTRAP changes,
# so setting it for the seed build above would rebuild the whole workspace twice a test run.
BUILD=()
[ "${LLMTOOL_FUZZ_DEV:-}" = 1 ] && BUILD=(--dev)
for target in "${TARGETS[@]}"; do
  "seed_$target"
  (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run "${BUILD[@]}" --sanitizer "${LLMTOOL_FUZZ_SANITIZER:-address}" "$target" "corpus/$target" -- -max_total_time="$SECONDS_TO_RUN" \
    -max_len=65536 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1)
done
