#!/usr/bin/env bash
# The whole test suite, exactly as CI runs it: formatting, lints, the local model (pulled once),
# every test (the example tools' own test files on the local model; the README's tour with no key; the elisp output checked in Emacs; the registry's storage on SQLite and on a
# throwaway PostgreSQL cluster), the prompt-file exports and the real-world
# prompt files rendered by the peers' own code, `llmtool mcp` driven by real MCP clients (the Python SDK, MCP Inspector), `llmtool lsp`
# driven by real LSP clients (pytest-lsp, Neovim, Emacs eglot and lsp-mode),
# llmtool against independent API servers (llama-cpp-python, LiteLLM), the server scraped by
# Prometheus, the web studio in
# Debian's Chromium (Playwright, axe-core) with its committed bundle checked, smart tools in the
# WebAssembly sandbox (the Python runtime pulled once), and a fuzz smoke run. Installs what the
# tests need (idempotently) on a fresh machine, so this one command is enough.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

# A fresh clone gains nothing from incremental compilation, and its caches double the size of
# target/ (the CI machine's disk once filled up with them).
if [ "${CI:-}" = true ]; then export CARGO_INCREMENTAL=0; fi

step "toolchain components (and the disk space the build has: a full disk fails it at a link)"
df -h . | tail -n 1
rustup component add rustfmt clippy >/dev/null 2>&1 || true
command -v cargo-nextest >/dev/null || cargo install --locked cargo-nextest

step "system packages the tests use (emacs-nox with eglot and lsp-mode, neovim, postgresql, chromium and a Korean font, prometheus, nginx)"
missing=()
command -v emacs >/dev/null || missing+=(emacs-nox)
compgen -G "/usr/share/emacs/site-lisp/elpa/eglot-*" >/dev/null || missing+=(elpa-eglot)
compgen -G "/usr/share/emacs/site-lisp/elpa/lsp-mode-*" >/dev/null || missing+=(elpa-lsp-mode)
command -v nvim >/dev/null || missing+=(neovim)
command -v chromium >/dev/null || missing+=(chromium)
# The studio's screenshots show a Korean example tool.
compgen -G "/usr/share/fonts/truetype/nanum/*" >/dev/null || missing+=(fonts-nanum)
# Debian's postgresql keeps its programs off PATH, under /usr/lib/postgresql/VERSION/bin.
command -v initdb >/dev/null || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
# Operating the server: Prometheus scrapes it, nginx balances two instances.
command -v prometheus >/dev/null || missing+=(prometheus)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)
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
model=$(cargo run -q -p llmtool -- model pull)
# Tests keep their runs in data directories of their own (LLMTOOL_DATA_DIR), which would each
# have their own models folder: they all share this one pulled model instead.
export LLMTOOL_MODELS_DIR="${model%/*}"

step "the smart tools' Python runtime (pulled once, checked against its SHA-256, compiled once)"
python_wasm=$(cargo run -q -p llmtool -- sandbox pull)
export LLMTOOL_SANDBOX_DIR="${python_wasm%/*}" LLMTOOL_PYTHON_WASM="$python_wasm"

step "tiny random-weight GGUF models of each architecture, with NumPy's logits (gguf, numpy)"
python3 scripts/reference_models.py target/reference-models
export LLMTOOL_REFERENCE_MODELS="$PWD/target/reference-models"

step "tests (cargo nextest)"
cargo nextest run --workspace --locked --no-fail-fast

step "the guard against a slower check: llmtool check (debug build) against ajv on 1,000 generated tool files, by ratio"
if ! cmp -s bench/package-lock.json bench/node_modules/.installed-lock.json 2>/dev/null; then
  npm ci --prefix bench --no-audit --no-fund --loglevel=error
  cp bench/package-lock.json bench/node_modules/.installed-lock.json
fi
python3 bench/check_guard.py target/debug/llmtool 1000 5

step "doc tests"
cargo test --workspace --doc --locked

step "llmtool test examples/ on the local model (seed 3), its JUnit report read by junitparser"
python3 scripts/example_tests.py

step "the README's short tour, run top to bottom with no API key, as written"
python3 scripts/readme_tour.py

step "prompt-file exports rendered by the peers' own code (Prompty, Dotprompt, llm, Semantic Kernel, Langfuse)"
python3 scripts/peers.py

step "test files written for promptfoo: promptfoo eval and llmtool test give every case the same verdict on the same answers"
python3 scripts/promptfoo_peer.py

step "the price table is exactly what its LiteLLM version gives (not typed by hand)"
python3 scripts/refresh_prices.py --check

step "real-world prompt files rendered by their peers and by llmtool (equal text)"
python3 scripts/real_world_renders.py

step "the peers' own spec suites (Dotprompt, Prompty, llm) through llmtool import and render"
python3 scripts/peer_suites.py

step "the tool library's HTTP API fuzzed from its OpenAPI document (schemathesis): no server error"
python3 scripts/registry_fuzz.py

step "invites through a real SMTP server (aiosmtpd, STARTTLS and TLS, with AUTH): each link signs in once"
python3 scripts/invites_by_mail.py

step "llmtool mcp with real MCP clients (the Python SDK, MCP Inspector)"
python3 scripts/mcp_clients.py

step "exported tools run by agent frameworks (LangChain, the OpenAI Agents SDK, Vercel's AI SDK) through llmtool call"
python3 scripts/agent_frameworks.py

step "llmtool lsp with real LSP clients (pytest-lsp, headless Neovim, Emacs eglot and lsp-mode) and the VS Code package"
python3 scripts/lsp_clients.py

step "independent API servers (llama-cpp-python, LiteLLM)"
python3 scripts/independent.py

step "the web studio: its committed bundle is what web/ builds, and it works in Chromium"
# npm packages once into web/node_modules (ignored), again only when the lock file changes.
if ! cmp -s web/package-lock.json web/node_modules/.installed-lock.json 2>/dev/null; then
  npm ci --prefix web --no-audit --no-fund --loglevel=error
  cp web/package-lock.json web/node_modules/.installed-lock.json
fi
node web/build.mjs --check
cargo build -q -p llmtool -p llmtool-testkit --bin llmtool --bin mock-llm --bin mock-batches
node --test web/tests/

step "operating the server: Prometheus scrapes /metrics and answers PromQL; two servers on PostgreSQL behind nginx, one killed under load"
python3 scripts/operations.py

step "llmtool batch on Parquet files written by pyarrow and polars, and its Parquet read back by them"
python3 scripts/parquet_peers.py

step "the mock batch engines driven by the providers' own SDKs (openai, anthropic, google-genai)"
python3 scripts/batch_sdks.py

if [ -d fuzz ]; then
  step "fuzz smoke run"
  scripts/fuzz.sh 30
fi

step "all checks passed"
