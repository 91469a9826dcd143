#!/usr/bin/env python3
"""Rows decoded together: `llmtool batch -j 8` against `-j 1` on the local model.

usage: bench/batch_local.py [ROWS=64] [ROUNDS=3] [MODEL ...]

For each model (default: smollm2 and qwen2.5-coder-0.5b, both pulled with `llmtool model pull`),
ROWS rows of a tool that writes one sentence for a shop window about a product (greedy, at
most 48 tokens: the answers are decoded, not only read) run through the release binary's
`llmtool batch --model local:MODEL`, one row at a time (-j 1) and eight at a time (-j 8), the two alternating for
ROUNDS rounds. The figure is rows per second over the whole command (process start and model
load included), the median of the rounds, and the ratio -j 8 / -j 1. Every run's answers must
be the same, row by row, as the first run's: the batching changes the speed, never an answer.
"""
import json, os, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLMTOOL = os.path.join(ROOT, "target", "release", "llmtool")
ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 64
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
MODELS = sys.argv[3:] or ["smollm2", "qwen2.5-coder-0.5b"]
ITEMS = ["a red bicycle", "a wool scarf", "a ceramic teapot", "a pair of running shoes", "a desk lamp",
         "a leather wallet", "a garden hose", "a chess set"]


def tool():
    return json.dumps({
        "model_prompt": "Write one sentence that describes this product for a shop window: {{product}}",
        "metadata": {"prompt_name": "Blurb", "description": "One sentence.", "model_version": ["smollm2"],
                     "parameters": {"temperature": 0, "max_tokens": 48},
                     "variables": [{"name": "product", "type": "text", "description": "The product."}],
                     "expected_output": {"type": "text"}}})


def run(folder, model, jobs, round_):
    """One batch: (seconds, {id: answer}, output tokens)."""
    out = os.path.join(folder, f"out-{jobs}-{round_}.jsonl")
    command = [LLMTOOL, "batch", os.path.join(folder, "tool.json"), os.path.join(folder, "rows.csv"),
               "-o", out, "--id", "id", "-j", str(jobs), "--config", os.path.join(folder, "config.toml"), "--model", f"local:{model}"]
    env = {**os.environ, "LLMTOOL_NO_LOG": "1"}
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"batch -j {jobs} failed ({done.returncode}): {done.stderr}")
    records = [json.loads(line) for line in open(out)]
    if any(r["outcome"] != "ok" or r["model"] != model for r in records):
        sys.exit(f"batch -j {jobs}: a row did not succeed: {records}")
    return seconds, {r["id"]: r["output"] for r in records}, sum(r["output_tokens"] for r in records)


def main():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "llmtool", "--bin", "llmtool"], cwd=ROOT, check=True)
    print(f"llmtool batch on the local model: {ROWS} rows, -j 1 against -j 8, {ROUNDS} rounds (medians)")
    for model in MODELS:
        folder = tempfile.mkdtemp(prefix="llmtool-batch-local-")
        with open(os.path.join(folder, "tool.json"), "w") as out:
            out.write(tool())
        with open(os.path.join(folder, "rows.csv"), "w") as out:
            out.write("id,product\n")
            for n in range(ROWS):
                out.write(f"r{n},\"{ITEMS[n % len(ITEMS)]} (model {n})\"\n")
        open(os.path.join(folder, "config.toml"), "w").close()
        rates, first, tokens = {1: [], 8: []}, None, 0
        for round_ in range(ROUNDS):
            for jobs in (1, 8):
                seconds, answers, tokens = run(folder, model, jobs, round_)
                first = first or answers
                if answers != first:
                    differing = sorted(k for k in first if first[k] != answers.get(k))
                    sys.exit(f"{model}: -j {jobs} answered rows {differing} differently")
                rates[jobs].append(ROWS / seconds)
        one, eight = statistics.median(rates[1]), statistics.median(rates[8])
        rounds = ", ".join(f"{b / a:.2f}x" for a, b in zip(rates[1], rates[8]))
        print(f"  {model}: -j 1 {one:.2f} rows/s, -j 8 {eight:.2f} rows/s: "
              f"rows decoded together {eight / one:.2f}x one at a time (rounds {rounds}; "
              f"{tokens} tokens written, the same answers every run)")
        subprocess.run(["rm", "-rf", folder])


if __name__ == "__main__":
    main()
