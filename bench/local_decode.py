#!/usr/bin/env python3
"""Decode and prompt speed, and peak memory, of llmtool's local engine against llama.cpp on the
same GGUF file with the same number of threads, in one run.

usage: bench/local_decode.py MODEL.gguf [THREADS=2] [LLAMA_PYTHON=target/independent/llama-cpp/bin/python]

Each engine first reads a long chat prompt (about 340 tokens with SmolLM2's template) and
answers one token: its prompt speed. Then it answers a short prompt three times, greedy, 128
tokens each: the best decode speed of the three. llama.cpp runs as its own HTTP server
(`llama-server`'s code, which the prebuilt `xllamacpp` wheel carries; scripts/independent.py
installs it), started for each round, and the timings of its answers give both speeds
(`prompt_per_second`, `predicted_per_second`: the server's own counters, free of HTTP), each
request with `cache_prompt` off so that nothing is reused. llama-cpp-python, used before,
exists only as source on the registry. llmtool's engine runs as `decode_speed`
(crates/llmtool-local/examples). The two alternate for three rounds. Peak resident memory is
each process's, from /usr/bin/time.
"""
import json, os, signal, socket, subprocess, sys, time, urllib.request

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
LLAMA_SERVER = """
import signal, sys, xllamacpp
model, port, threads = sys.argv[1:4]
params = xllamacpp.CommonParams()
params.model.path = model
params.hostnames = ["127.0.0.1"]
params.port = int(port)
params.n_ctx = 2048
params.cpuparams.n_threads = int(threads)
params.cpuparams_batch.n_threads = int(threads)
server = xllamacpp.Server(params)
print("listening", flush=True)
signal.sigwait({signal.SIGTERM, signal.SIGINT})
"""


def peak_rss_mb(stderr):
    return int(stderr.strip().splitlines()[-1]) / 1024


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def chat(port, text, max_tokens):
    """One greedy answer from the server: its timings."""
    body = {"messages": [{"role": "user", "content": text}], "max_tokens": max_tokens,
            "temperature": 0.0, "cache_prompt": False}
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as answer:
        return json.load(answer)["timings"]


def llama_cpp():
    port = free_port()
    server = subprocess.Popen(["/usr/bin/time", "-f", "%M", llama_python, "-c", LLAMA_SERVER, model, str(port), threads],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        if "listening" not in server.stdout.readline():
            sys.exit("llama.cpp's server did not start:\n" + server.stderr.read()[-2000:])
        prompt = chat(port, PROMPT, 1)["prompt_per_second"]
        decode = max(chat(port, "Write a long story about a robot who learns to paint.", 128)["predicted_per_second"]
                     for _ in range(3))
    finally:
        # SIGTERM to the Python under /usr/bin/time, which then prints its peak memory.
        subprocess.run(["pkill", "-TERM", "-P", str(server.pid)])
        _, stderr = server.communicate(timeout=60)
    return {"decode": decode, "prompt": prompt, "rss": peak_rss_mb(stderr)}


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
