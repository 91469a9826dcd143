#!/usr/bin/env python3
"""The tool library's HTTP API fuzzed from its own OpenAPI document by schemathesis (PyPI):
`llmtool serve` is started on a fresh SQLite library (seeded with the built-in tools) on a free
loopback port, with an admin token, and schemathesis generates requests for every operation
(its coverage, fuzzing and stateful phases). No answer may be a server error (5xx), and the
server must still be running at the end.

A second pass checks what a run streams: a server that runs tools on the test kit's mock model
(`mock-llm`), one tool published on it, and schemathesis's generated runs and follow-ups sent to
that tool (scripts/schemathesis/run_event_hooks.py), each answer checked against the OpenAPI
document, every Server-Sent Event's data against its documented schema. Exits 1 when either
pass finds a problem.

schemathesis is installed under target/schemathesis (once; LLMTOOL_SCHEMATHESIS_DIR
overrides).
"""
import json, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.environ.get("LLMTOOL_SCHEMATHESIS_DIR", os.path.join(ROOT, "target", "schemathesis"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import BUILD, venv_python, build_binaries  # noqa: E402
from peers import LLMTOOL  # noqa: E402

PACKAGES = ["schemathesis==4.32.5"]
EXAMPLES_PER_OPERATION = "40"
RUN_EXAMPLES = "12"
HOOKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemathesis")
SEED = "20261123"


def log(message):
    print(f"[registry fuzz] {message}", flush=True)


def run_events(schemathesis):
    """The second pass: real runs and follow-ups on the mock model, their streams checked."""
    mock = subprocess.Popen([os.path.join(BUILD, "mock-llm"), "127.0.0.1:0", "4"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        mock_url = None
        for line in mock.stdout:
            if "http://" in line:
                mock_url = line.strip().split()[-1]
                break
        if mock_url is None:
            log("mock-llm did not start")
            return 1
        with tempfile.TemporaryDirectory() as work:
            env = {**os.environ, "LLMTOOL_DATA_DIR": os.path.join(work, "data"), "LLMTOOL_NO_LOG": "1",
                   "XDG_CONFIG_HOME": os.path.join(work, "config"), "MOCK_KEY": "mock-key-for-fuzzing"}
            env.pop("LLMTOOL_REGISTRY", None)
            env.pop("LLMTOOL_TOKEN", None)
            config = os.path.join(work, "llmtool.toml")
            with open(config, "w") as file:
                file.write(f'[providers.mock]\napi = "openai"\nbase_url = "{mock_url}/v1"\napi_key_env = "MOCK_KEY"\n\n'
                           '[prices."mock/alpha"]\ninput = 1.0\noutput = 2.0\n')
            token = subprocess.run([LLMTOOL, "token", "create", "fuzz", "--role", "admin"], env=env,
                                   capture_output=True, text=True, check=True).stdout.strip()
            server = subprocess.Popen([LLMTOOL, "serve", "--listen", "127.0.0.1:0", "--rate-limit", "0",
                                       "--config", config], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True)
            try:
                api = None
                for line in server.stderr:
                    if line.startswith("llmtool serve: http://"):
                        api = line.split()[2]
                        break
                if api is None:
                    log("llmtool serve (with runs) did not start")
                    return 1
                url = api.removesuffix("/api/v1")
                tool = {"model_prompt": "Write one line about {{topic}}.",
                        "metadata": {"prompt_name": "fuzz-line", "description": "A line on the mock model.",
                                     "model_version": ["mock/alpha"], "timestamp": "2026-12-03T08:00:00Z",
                                     "variables": [{"name": "topic", "type": "text", "description": "What about."}]}}
                path = os.path.join(work, "fuzz-line.json")
                with open(path, "w") as file:
                    json.dump(tool, file)
                subprocess.run([LLMTOOL, "publish", path], env={**env, "LLMTOOL_REGISTRY": url, "LLMTOOL_TOKEN": token},
                               capture_output=True, text=True, check=True)
                hooks_env = {**os.environ, "PYTHONPATH": HOOKS, "SCHEMATHESIS_HOOKS": "run_event_hooks",
                             "LLMTOOL_FUZZ_URL": url, "LLMTOOL_FUZZ_TOKEN": token,
                             "LLMTOOL_FUZZ_SLUG": "fuzz-line", "LLMTOOL_FUZZ_MODEL": "mock/alpha"}
                result = subprocess.run([
                    schemathesis, "run", f"{api}/openapi.json", "--url", api,
                    "--include-path-regex", "^/(tools/\\{slug\\}/run|conversations/\\{id\\}/messages)$",
                    "--checks", "not_a_server_error,response_schema_conformance,content_type_conformance",
                    "--header", f"Authorization: Bearer {token}", "--phases", "examples,fuzzing",
                    "--max-examples", RUN_EXAMPLES, "--seed", SEED,
                ], cwd=WORK, env=hooks_env)
                alive = server.poll() is None
            finally:
                server.kill()
                server.wait()
    finally:
        mock.kill()
        mock.wait()
    if not alive:
        log("the server died during the runs")
        return 1
    if result.returncode != 0:
        log("a run's stream does not match the OpenAPI document (above)")
        return 1
    log("every run's events match their documented schemas")
    return 0


def main():
    build_binaries()
    python = venv_python(WORK, PACKAGES, "import schemathesis", log)
    schemathesis = os.path.join(os.path.dirname(python), "schemathesis")
    if run_events(schemathesis) != 0:
        return 1
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
