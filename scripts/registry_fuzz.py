#!/usr/bin/env python3
"""The tool library's HTTP API fuzzed from its own OpenAPI document by schemathesis (PyPI):
`llmtool serve` is started on a fresh SQLite library (seeded with the built-in tools) on a free
loopback port, with an admin token, and schemathesis generates requests for every operation
(its coverage, fuzzing and stateful phases). No answer may be a server error (5xx), and the
server must still be running at the end. Exits 1 otherwise.

schemathesis is installed under target/schemathesis (once; LLMTOOL_SCHEMATHESIS_DIR
overrides).
"""
import os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.environ.get("LLMTOOL_SCHEMATHESIS_DIR", os.path.join(ROOT, "target", "schemathesis"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import venv_python, build_binaries  # noqa: E402
from peers import LLMTOOL  # noqa: E402

PACKAGES = ["schemathesis==4.32.5"]
EXAMPLES_PER_OPERATION = "40"
SEED = "20261123"


def log(message):
    print(f"[registry fuzz] {message}", flush=True)


def main():
    build_binaries()
    python = venv_python(WORK, PACKAGES, "import schemathesis", log)
    schemathesis = os.path.join(os.path.dirname(python), "schemathesis")
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "LLMTOOL_DATA_DIR": data, "LLMTOOL_NO_LOG": "1"}
        made = subprocess.run([LLMTOOL, "token", "create", "fuzz", "--role", "admin"], env=env,
                              capture_output=True, text=True, check=True)
        token = made.stdout.strip()
        # No rate limit: every generated request reaches the code under test.
        server = subprocess.Popen([LLMTOOL, "serve", "--listen", "127.0.0.1:0", "--rate-limit", "0"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            url = None
            for line in server.stderr:
                if line.startswith("llmtool serve: http://"):
                    url = line.split()[2]
                    break
            if url is None:
                log("llmtool serve did not start")
                return 1
            result = subprocess.run([
                schemathesis, "run", f"{url}/openapi.json", "--url", url,
                "--checks", "not_a_server_error", "--header", f"Authorization: Bearer {token}",
                "--max-examples", EXAMPLES_PER_OPERATION, "--seed", SEED,
            ], cwd=WORK)  # schemathesis keeps its cache in the folder it runs in
            alive = server.poll() is None
        finally:
            server.kill()
            server.wait()
    if not alive:
        log("the server died during the run")
        return 1
    if result.returncode != 0:
        log("schemathesis found server errors (above)")
        return 1
    log("no server error in any generated request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
