#!/usr/bin/env bash
# The whole test suite, exactly as CI runs it: formatting, lints, the local model (pulled once),
# every test (the elisp output checked in Emacs; the registry's storage on SQLite and on a
# throwaway PostgreSQL cluster), the prompt-file exports and the real-world
# prompt files rendered by the peers' own code, `llmtool mcp` driven by real MCP clients (the Python SDK, MCP Inspector),
# llmtool against independent API servers (llama-cpp-python, LiteLLM), and a
# fuzz smoke run. Installs what the tests need (idempotently) on a fresh machine, so this one
# command is enough.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "toolchain components"
rustup component add rustfmt clippy >/dev/null 2>&1 || true
command -v cargo-nextest >/dev/null || cargo install --locked cargo-nextest

step "system packages the tests use (emacs-nox, postgresql)"
missing=()
command -v emacs >/dev/null || missing+=(emacs-nox)
# Debian's postgresql keeps its programs off PATH, under /usr/lib/postgresql/VERSION/bin.
command -v initdb >/dev/null || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

step "a throwaway PostgreSQL cluster on a loopback port (the registry's second backend)"
eval "$(scripts/postgres.sh start)"
trap 'scripts/postgres.sh stop' EXIT

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy --all-targets -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "the local model (pulled once, checked against its SHA-256)"
cargo run -q -p llmtool -- model pull

step "tests (cargo nextest)"
cargo nextest run --workspace --locked --no-fail-fast

step "doc tests"
cargo test --workspace --doc --locked

step "prompt-file exports rendered by the peers' own code (Prompty, Dotprompt, llm, Semantic Kernel)"
python3 scripts/peers.py

step "the price table is exactly what its LiteLLM version gives (not typed by hand)"
python3 scripts/refresh_prices.py --check

step "real-world prompt files rendered by their peers and by llmtool (equal text)"
python3 scripts/real_world_renders.py

step "the tool library's HTTP API fuzzed from its OpenAPI document (schemathesis): no server error"
python3 scripts/registry_fuzz.py

step "llmtool mcp with real MCP clients (the Python SDK, MCP Inspector)"
python3 scripts/mcp_clients.py

step "independent API servers (llama-cpp-python, LiteLLM)"
python3 scripts/independent.py

if [ -d fuzz ]; then
  step "fuzz smoke run"
  scripts/fuzz.sh 30
fi

step "all checks passed"
