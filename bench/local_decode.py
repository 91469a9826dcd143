#!/usr/bin/env python3
"""Decode and prompt speed, and peak memory, of llmtool's local engine against llama.cpp on the
same GGUF file with the same number of threads, in one run.

usage: bench/local_decode.py MODEL.gguf [THREADS=2] [LLAMA_PYTHON=target/independent/llama-cpp/bin/python]

Each engine first reads a long chat prompt (about 340 tokens with SmolLM2's template) and
answers one token: its prompt speed. Then it answers a short prompt three times, greedy, 128
tokens each: the best decode speed of the three. llama.cpp runs through llama-cpp-python
(scripts/independent.py installs it), and its own counters give both speeds; llmtool's engine
runs as `decode_speed` (crates/llmtool-local/examples). The two alternate for three rounds.
Peak resident memory is each process's, from /usr/bin/time.
"""
import json, os, re, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
model = os.path.abspath(sys.argv[1])
threads = sys.argv[2] if len(sys.argv) > 2 else "2"
llama_python = sys.argv[3] if len(sys.argv) > 3 else os.path.join(ROOT, "target/independent/llama-cpp/bin/python")
env = {**os.environ, "RAYON_NUM_THREADS": threads}
PROMPT = ("Here are my notes from a week of painting lessons. " * 2 + "On Monday we mixed colours: red and "
          "yellow made orange, blue and yellow made green, and a little black dulled everything. On Tuesday "
          "we drew the same apple five times with five different lights. On Wednesday the teacher made us "
          "paint only with a palette knife, which was messy but freeing. On Thursday we copied a landscape "
          "by a painter we admire, and found out how much of it was simply patience. On Friday we painted "
          "whatever we liked. " * 3 + "Write a long story about a robot who learns to paint, using these notes.")

subprocess.run(["cargo", "build", "--release", "-q", "-p", "llmtool-local", "--example", "decode_speed"], cwd=ROOT, check=True)
LLAMA = f"""
import sys
from llama_cpp import Llama
m = Llama({model!r}, n_threads={threads}, n_threads_batch={threads}, n_ctx=2048, verbose=True)
m.create_chat_completion([{{"role": "user", "content": sys.argv[1]}}], max_tokens=1, temperature=0.0)
messages = [{{"role": "user", "content": "Write a long story about a robot who learns to paint."}}]
for _ in range(3):
    m.reset()
    m.create_chat_completion(messages, max_tokens=128, temperature=0.0)
"""


def peak_rss_mb(stderr):
    return int(stderr.strip().splitlines()[-1]) / 1024


def llama_cpp():
    result = subprocess.run(["/usr/bin/time", "-f", "%M", llama_python, "-c", LLAMA, PROMPT], capture_output=True, text=True, env=env)
    counter = r"^\s*(?:llama_perf_context_print:)?\s*{} time =.*?([0-9.]+) tokens per second"
    # The last three decode counters are the three answers (the first answer has one token).
    decode = [float(s) for s in re.findall(counter.format("eval"), result.stderr, re.M)][-3:]
    prompt = [float(s) for s in re.findall(counter.format("prompt eval"), result.stderr, re.M)]
    if not decode or not prompt:
        sys.exit("no llama.cpp timings found:\n" + result.stderr[-2000:])
    return {"decode": max(decode), "prompt": prompt[0], "rss": peak_rss_mb(result.stderr)}


def llmtool():
    args = ["/usr/bin/time", "-f", "%M", os.path.join(ROOT, "target/release/examples/decode_speed"), model, PROMPT]
    result = subprocess.run(args, capture_output=True, text=True, env=env, check=True)
    ours = json.loads(result.stdout)
    return {"decode": ours["tokens_per_second"], "prompt": ours["prefill_tokens_per_second"],
            "rss": peak_rss_mb(result.stderr), "load": ours["load_ms"], "prompt_tokens": ours["long_prompt_tokens"]}


rounds = [(llmtool(), llama_cpp()) for _ in range(3)]
print(f"{os.path.basename(model)}; threads: {threads}; long prompt: {rounds[0][0]['prompt_tokens']} tokens; decode: best of 3 generations of 128 tokens, greedy")
for i, (ours, theirs) in enumerate(rounds, 1):
    print(f"round {i}: decode llmtool {ours['decode']:6.1f} llama.cpp {theirs['decode']:6.1f} tokens/s ({ours['decode'] / theirs['decode']:4.2f}x)"
          f"   prompt llmtool {ours['prompt']:6.1f} llama.cpp {theirs['prompt']:6.1f} tokens/s ({ours['prompt'] / theirs['prompt']:4.2f}x)"
          f"   peak RSS llmtool {ours['rss']:6.0f} MB llama.cpp {theirs['rss']:6.0f} MB   (llmtool load {ours['load']:.0f} ms)")
best = {k: (max(r[0][k] for r in rounds), max(r[1][k] for r in rounds)) for k in ("decode", "prompt")}
rss = (max(r[0]["rss"] for r in rounds), max(r[1]["rss"] for r in rounds))
print(f"best:    decode llmtool {best['decode'][0]:6.1f} llama.cpp {best['decode'][1]:6.1f} tokens/s ({best['decode'][0] / best['decode'][1]:4.2f}x)"
      f"   prompt llmtool {best['prompt'][0]:6.1f} llama.cpp {best['prompt'][1]:6.1f} tokens/s ({best['prompt'][0] / best['prompt'][1]:4.2f}x)"
      f"   peak RSS llmtool {rss[0]:6.0f} MB llama.cpp {rss[1]:6.0f} MB")
