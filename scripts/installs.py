#!/usr/bin/env python3
"""Every package the test command's scripts use, installed before they run: the scripts' own
installers (each idempotent, each into its ignored folder under target/), called here in one
go so that `scripts/test.sh` can run them in the background while the workspace compiles.

Downloads wait on the network and unpacking on the disk, so three installers run at once;
a compile on both cores loses little to them. Each installer still runs again, as a quick
check, when its script starts, so a script run alone installs what it needs as before.

Usage: scripts/installs.py  (exit 1 naming the installers that failed; their output above)
"""
import concurrent.futures, os, sys, time, traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import agent_frameworks, batch_sdks, example_tests, independent, invites_by_mail, lsp_clients  # noqa: E402
import mcp_clients, operations, parquet_peers, peer_suites, peers, promptfoo_peer  # noqa: E402
import real_world_renders, refresh_prices, registry_fuzz, slack_by_sdk  # noqa: E402
from checks import venv_python  # noqa: E402


def quiet(_message):
    pass


# (name, installer): the scripts' own functions, with the arguments their scripts give them.
INSTALLERS = [
    ("peers (Prompty, Dotprompt, llm, Semantic Kernel)", peers.peers_python),
    ("Langfuse", lambda: venv_python(*peers.LANGFUSE, quiet)),
    ("Prompty 1", lambda: venv_python(*real_world_renders.PROMPTY_1, quiet)),
    ("promptfoo", promptfoo_peer.install),
    ("nunjucks", peer_suites.nunjucks_module),
    ("junitparser", example_tests.python),
    ("LiteLLM's price table", refresh_prices.fetch_pinned),
    ("schemathesis", lambda: venv_python(registry_fuzz.WORK, registry_fuzz.PACKAGES, "import schemathesis", quiet)),
    ("slack_sdk", lambda: venv_python(slack_by_sdk.WORK, slack_by_sdk.PACKAGES, slack_by_sdk.PROBE, quiet)),
    ("aiosmtpd", lambda: venv_python(invites_by_mail.WORK, invites_by_mail.PACKAGES, "import aiosmtpd, cryptography", quiet)),
    ("the MCP Python SDK", mcp_clients.client_python),
    ("MCP Inspector", mcp_clients.inspector),
    ("LangChain and the OpenAI Agents SDK", lambda: venv_python(os.path.join(agent_frameworks.WORK, "venv"), agent_frameworks.PACKAGES, agent_frameworks.PROBE, quiet)),
    ("Vercel's AI SDK", agent_frameworks.node_folder),
    ("pytest-lsp", lsp_clients.python),
    ("llama.cpp's server (xllamacpp), LiteLLM and their model", independent.install),
    ("the OTLP receiver", lambda: venv_python(operations.VENV, operations.RECEIVER_PACKAGES, operations.RECEIVER_PROBE, quiet)),
    ("pyarrow and polars", lambda: venv_python(parquet_peers.VENV, parquet_peers.PACKAGES, "import pyarrow, polars", quiet)),
    ("the providers' SDKs", batch_sdks.python),
]


def timed(name, installer):
    started = time.monotonic()
    installer()
    return time.monotonic() - started


def main():
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        futures = {pool.submit(timed, name, installer): name for name, installer in INSTALLERS}
        for future in concurrent.futures.as_completed(futures):
            name = futures[future]
            try:
                print(f"[installs] ready in {future.result():.0f} s: {name}", flush=True)
            except Exception:  # a failed install is reported, and the others go on
                print(f"[installs] FAILED: {name}\n{traceback.format_exc()}", flush=True)
                failed.append(name)
    if failed:
        print(f"[installs] {len(failed)} failed: {', '.join(failed)}", flush=True)
        sys.exit(1)
    print("[installs] all ready", flush=True)


if __name__ == "__main__":
    main()
