#!/usr/bin/env python3
"""Time to first token through `llmtool run` against a direct request to the same local mock.

usage: bench/ttft.py [RUNS=200]

Starts the mock LLM server (crates/llmtool-testkit, `mock-llm`), then, RUNS times, interleaved:
  direct:  curl -sN POSTs the same Chat Completions request the tool makes;
  llmtool: llmtool run renders the tool, resolves the provider, sends, decodes and prints.
Each is timed from process start to the first byte of the answer on its stdout, so both pay
the same process start and pipe costs; the difference is what llmtool adds.
"""
import json, os, statistics, subprocess, sys, time

from mock_server import LLMTOOL, start

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 200
mock, url, work, config = start()
tool = os.path.join(work, "tool.json")
with open(tool, "w") as f:
    json.dump({"model_prompt": "Say hello to {{name}}.", "metadata": {"parameters": {"temperature": 0.2}}}, f)
body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "Say hello to Ana."}],
                   "temperature": 0.2, "stream": True, "stream_options": {"include_usage": True}})
commands = {
    "direct (curl -N)": ["curl", "-sN", "-X", "POST", f"{url}/v1/chat/completions",
                         "-H", "content-type: application/json", "-d", body],
    "llmtool run": [LLMTOOL, "run", tool, "--var", "name=Ana", "--config", config],
}


def first_byte_ms(command):
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    first = os.read(process.stdout.fileno(), 1)
    elapsed = (time.perf_counter() - start) * 1000
    process.stdout.read()
    if process.wait() != 0 or not first:
        sys.exit(f"{command[0]} failed")
    return elapsed


times = {label: [] for label in commands}
for _ in range(5):  # warm-up
    for command in commands.values():
        first_byte_ms(command)
for _ in range(RUNS):
    for label, command in commands.items():
        times[label].append(first_byte_ms(command))
mock.kill()

direct = statistics.median(times["direct (curl -N)"])
for label, values in times.items():
    values.sort()
    median = statistics.median(values)
    p90 = values[int(len(values) * 0.9)]
    print(f"{label:<18} median {median:7.2f} ms   p90 {p90:7.2f} ms   ({median / direct:.2f}x direct)")
print(f"added by llmtool at the median: {statistics.median(times['llmtool run']) - direct:+.2f} ms over {RUNS} runs")
