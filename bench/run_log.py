#!/usr/bin/env python3
"""What writing the run log adds to a run, in llmtool and in the `llm` CLI (which also logs
every prompt to SQLite), against the same local mock.

usage: bench/run_log.py [RUNS=100]

Starts the mock LLM server (crates/llmtool-testkit, `mock-llm`), then RUNS times, interleaved,
times four whole processes, each to its exit:
  llmtool run, logging (the default)   and   with LLMTOOL_NO_LOG=1;
  llm -m mock PROMPT, logging (the default)   and   with --no-log.
Each tool's own difference is its cost of logging a run; the peer is the `llm` package of
scripts/peers.py (in target/peers).
"""
import os, statistics, subprocess, sys, time

from mock_server import LLMTOOL, ROOT, start

sys.path.insert(0, os.path.join(ROOT, "scripts"))
from peers import peers_python  # noqa: E402

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 100
LLM = os.path.join(os.path.dirname(peers_python()), "llm")
mock, url, work, config = start()
tool = os.path.join(work, "tool.json")
with open(tool, "w") as f:
    f.write('{"model_prompt": "Say hello to {{name}}."}')
llm_home = os.path.join(work, "llm")
os.makedirs(llm_home)
with open(os.path.join(llm_home, "extra-openai-models.yaml"), "w") as f:
    f.write(f'- model_id: mock\n  model_name: m\n  api_base: "{url}/v1"\n')
env = {**os.environ, "LLMTOOL_DATA_DIR": os.path.join(work, "data"), "LLM_USER_PATH": llm_home,
       "OPENAI_API_KEY": "sk-bench", "XDG_CONFIG_HOME": work}
quiet = {**env, "LLMTOOL_NO_LOG": "1"}
commands = {
    "llmtool run, logged": ([LLMTOOL, "run", tool, "--var", "name=Ana", "--config", config], env),
    "llmtool run, not logged": ([LLMTOOL, "run", tool, "--var", "name=Ana", "--config", config], quiet),
    "llm, logged": ([LLM, "-m", "mock", "Say hello to Ana."], env),
    "llm, not logged": ([LLM, "-m", "mock", "--no-log", "Say hello to Ana."], env),
}


def whole_ms(command, environment):
    start = time.perf_counter()
    result = subprocess.run(command, env=environment, capture_output=True)
    elapsed = (time.perf_counter() - start) * 1000
    if result.returncode != 0:
        sys.exit(f"{command[0]} failed: {result.stderr.decode()[-500:]}")
    return elapsed


times = {label: [] for label in commands}
for _ in range(3):  # warm-up
    for command, environment in commands.values():
        whole_ms(command, environment)
for _ in range(RUNS):
    for label, (command, environment) in commands.items():
        times[label].append(whole_ms(command, environment))
mock.kill()

medians = {label: statistics.median(values) for label, values in times.items()}
for label, median in medians.items():
    print(f"{label:<24} median {median:8.2f} ms")
ours = medians["llmtool run, logged"] - medians["llmtool run, not logged"]
theirs = medians["llm, logged"] - medians["llm, not logged"]
print(f"logging adds {ours:+.2f} ms to an llmtool run and {theirs:+.2f} ms to an llm prompt, over {RUNS} runs")
