#!/usr/bin/env python3
"""Decode speed of llmtool's local engine against llama.cpp on the same GGUF file with
the same number of threads, in one run.

usage: bench/local_decode.py MODEL.gguf [THREADS=2] [LLAMA_PYTHON=target/independent/llama-cpp/bin/python]

llama.cpp runs through llama-cpp-python (scripts/independent.py installs it), greedy, 128 tokens
of the same chat prompt; its own counters give the decode ("eval") speed. llmtool's engine runs
as `decode_speed` (crates/llmtool-local/examples), best of 3. The two alternate, three rounds each.
"""
import json, os, re, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
model = os.path.abspath(sys.argv[1])
threads = sys.argv[2] if len(sys.argv) > 2 else "2"
llama_python = sys.argv[3] if len(sys.argv) > 3 else os.path.join(ROOT, "target/independent/llama-cpp/bin/python")
env = {**os.environ, "RAYON_NUM_THREADS": threads}

subprocess.run(["cargo", "build", "--release", "-q", "-p", "llmtool-local", "--example", "decode_speed"], cwd=ROOT, check=True)
LLAMA = f"""
from llama_cpp import Llama
m = Llama({model!r}, n_threads={threads}, n_threads_batch={threads}, n_ctx=2048, verbose=True)
messages = [{{"role": "user", "content": "Write a long story about a robot who learns to paint."}}]
for _ in range(3):
    m.reset()
    m.create_chat_completion(messages, max_tokens=128, temperature=0.0)
"""


def llama_cpp():
    result = subprocess.run([llama_python, "-c", LLAMA], capture_output=True, text=True, env=env)
    speeds = [float(s) for s in re.findall(r"^\s*(?:llama_perf_context_print:)?\s*eval time =.*?([0-9.]+) tokens per second", result.stderr, re.M)]
    if not speeds:
        sys.exit("no llama.cpp timings found:\n" + result.stderr[-2000:])
    return max(speeds)


def llmtool():
    args = [os.path.join(ROOT, "target/release/examples/decode_speed"), model]
    return json.loads(subprocess.run(args, capture_output=True, text=True, env=env, check=True).stdout)


rounds = []
for _ in range(3):
    ours = llmtool()
    rounds.append((ours["tokens_per_second"], llama_cpp(), ours["load_ms"]))

print(f"threads: {threads}; each round: best of 3 generations of 128 tokens, greedy")
for i, (ours, theirs, load) in enumerate(rounds, 1):
    print(f"round {i}: llmtool {ours:6.1f} tokens/s   llama.cpp {theirs:6.1f} tokens/s   {ours / theirs:5.2f}x   (llmtool load {load:.0f} ms)")
ours, theirs = max(r[0] for r in rounds), max(r[1] for r in rounds)
print(f"best:    llmtool {ours:6.1f} tokens/s   llama.cpp {theirs:6.1f} tokens/s   {ours / theirs:5.2f}x")
