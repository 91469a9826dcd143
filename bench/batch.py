#!/usr/bin/env python3
"""`llmtool batch` against the ideal (run by bench/batch.sh).

usage: bench/batch.py [ROWS=10000] [BIG=1000000]

1. Throughput: ROWS rows of a one-variable tool, run by `llmtool batch -j 64` (release build)
   against mock-llm (crates/llmtool-testkit) holding every answer back 50 ms. The ideal is
   concurrency / latency = 64 / 0.05 s = 1,280 rows a second; the figure is rows per second
   over the whole command (start, reading, journal and output included), and its ratio to the
   ideal. Also at -j 16 and -j 256.
2. Memory: peak resident memory of the same batch over ROWS and over BIG rows, with no
   latency (so BIG rows take minutes, not hours): the batch process's own ru_maxrss (wait4).
3. A rerun of the BIG batch, every row already done: how long skipping takes.
4. The local model: a classification tool (three labels, the answer constrained to them) over
   LOCAL rows of short reviews on the embedded model (it must be pulled: `llmtool model pull`),
   one row at a time (-j 1) against rows decoded together (-j 4, 8, 16): rows per second and
   the ratio. Same answers either way (the test `answers_decoded_together_are_the_answers_
   decoded_alone` checks it).

usage: bench/batch.py [ROWS=10000] [BIG=1000000] [LOCAL=64]
"""
import json, os, subprocess, sys, tempfile, time

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
BIG = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
LOCAL = int(sys.argv[3]) if len(sys.argv) > 3 else 64
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELEASE = os.path.join(ROOT, "target", "release")
LATENCY_MS = 50

TOOL = """{"model_prompt": "Classify the sentiment of this review as positive, negative or neutral: {{review}}",
 "metadata": {"prompt_name": "Sentiment", "description": "One word.", "model_version": ["mock/m"],
  "variables": [{"name": "review", "type": "text", "description": "The review."}],
  "expected_output": {"type": "text"}}}"""


CLASSIFY = """{"model_prompt": "Classify the sentiment of this review. Answer positive, negative or neutral.\\n\\nReview: {{review}}",
 "metadata": {"prompt_name": "Sentiment", "description": "One label.", "model_version": ["smollm2"],
  "parameters": {"temperature": 0, "max_tokens": 8},
  "variables": [{"name": "review", "type": "text", "description": "The review."}],
  "expected_output": {"type": "limited", "allowed_values": ["positive", "negative", "neutral"]}}}"""

REVIEWS = ["Great battery, lasts all day.", "Broke after a week.", "It is a phone.", "Fast delivery and well packed.",
           "The screen scratches too easily.", "Does what it says.", "Best purchase this year!", "Customer service never answered."]


def mock(latency_ms):
    """mock-llm on a free port: (process, URL)."""
    process = subprocess.Popen([os.path.join(RELEASE, "mock-llm"), "127.0.0.1:0", "3", str(latency_ms)],
                               stdout=subprocess.PIPE, text=True)
    return process, process.stdout.readline().strip()


def dataset(path, rows):
    with open(path, "w") as out:
        out.write("id,review\n")
        for n in range(rows):
            out.write(f"r{n},\"Review number {n}: the product did what it said, mostly.\"\n")


def batch(folder, url, data, out, jobs, tool="tool.json"):
    """Runs the batch: (seconds, peak resident KiB, stderr). With no `url`, on the local model."""
    with open(os.path.join(folder, "config.toml"), "w") as config:
        if url:
            config.write(f'[providers.mock]\napi = "openai"\nbase_url = "{url}/v1"\napi_key_env = "MOCK_KEY"\n')
    env = {**os.environ, "MOCK_KEY": "bench"}
    if url:
        env["LLMTOOL_DATA_DIR"] = os.path.join(folder, "data")
    command = [os.path.join(RELEASE, "llmtool"), "batch", os.path.join(folder, tool), data,
               "-o", out, "--id", "id", "-j", str(jobs), "--config", os.path.join(folder, "config.toml")]
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    said = child.stderr.read()
    # wait4 gives this child's own resource use, its peak resident memory among them.
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        sys.exit(f"batch failed ({child.returncode}): {said}")
    return seconds, usage.ru_maxrss, said.strip()


def main():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "llmtool", "-p", "llmtool-testkit",
                    "--bin", "llmtool", "--bin", "mock-llm"], cwd=ROOT, check=True)
    folder = tempfile.mkdtemp(prefix="llmtool-batch-bench-")
    with open(os.path.join(folder, "tool.json"), "w") as tool:
        tool.write(TOOL)
    small = os.path.join(folder, "rows.csv")
    dataset(small, ROWS)
    print(f"llmtool batch, {ROWS} rows against mock-llm answering after {LATENCY_MS} ms (ideal = jobs / latency)")
    server, url = mock(LATENCY_MS)
    try:
        for jobs in (16, 64, 256):
            out = os.path.join(folder, f"out-{jobs}.jsonl")
            seconds, _, said = batch(folder, url, small, out, jobs)
            rate = ROWS / seconds
            ideal = jobs / (LATENCY_MS / 1000)
            print(f"  -j {jobs:>3}: {seconds:6.2f} s, {rate:8.1f} rows/s, ideal {ideal:7.1f}: {rate / ideal:.2f}x   [{said.splitlines()[-1][:60]}]")
    finally:
        server.terminate()
    print(f"peak memory with no latency, -j 64")
    server, url = mock(0)
    try:
        sizes = [ROWS, BIG] if BIG > ROWS else [ROWS]
        for rows in sizes:
            data = os.path.join(folder, f"rows-{rows}.csv")
            dataset(data, rows)
            out = os.path.join(folder, f"big-{rows}.jsonl")
            seconds, peak, _ = batch(folder, url, data, out, 64)
            print(f"  {rows:>8} rows: {seconds:7.1f} s ({rows / seconds:7.0f} rows/s), peak resident {peak / 1024:6.1f} MiB")
        seconds, peak, said = batch(folder, url, data, out, 64)
        print(f"  rerun of {sizes[-1]} rows, all done: {seconds:.1f} s   [{said.splitlines()[-1][:70]}]")
    finally:
        server.terminate()
    if LOCAL > 0:
        with open(os.path.join(folder, "classify.json"), "w") as tool:
            tool.write(CLASSIFY)
        data = os.path.join(folder, "reviews.csv")
        with open(data, "w") as out:
            out.write("id,review\n")
            for n in range(LOCAL):
                out.write(f"r{n},\"{REVIEWS[n % len(REVIEWS)]} (order {n})\"\n")
        print(f"the local model, a classification tool over {LOCAL} rows")
        # The shell loop the issue starts from: one `llmtool run` a row (a process and a model
        # load each), over the first rows.
        loop_rows = min(LOCAL, 16)
        env = {**os.environ, "LLMTOOL_NO_LOG": "1"}
        start = time.perf_counter()
        for n in range(loop_rows):
            review = f"{REVIEWS[n % len(REVIEWS)]} (order {n})"
            subprocess.run([os.path.join(RELEASE, "llmtool"), "run", os.path.join(folder, "classify.json"),
                            "--var", f"review={review}", "--no-stream"], env=env, check=True, capture_output=True)
        shell = loop_rows / (time.perf_counter() - start)
        print(f"  a shell loop of `llmtool run` ({loop_rows} rows): {shell:5.2f} rows/s")
        base, answers = None, {}
        for jobs in (1, 4, 8, 16):
            out = os.path.join(folder, f"local-{jobs}.jsonl")
            seconds, peak, said = batch(folder, None, data, out, jobs, "classify.json")
            rate = LOCAL / seconds
            base = base or rate
            with open(out) as records:
                answers[jobs] = sorted((r["id"], r["output"]) for r in map(json.loads, records))
            same = "same answers" if answers[jobs] == answers[1] else "ANSWERS DIFFER"
            print(f"  batch -j {jobs:>2}: {seconds:6.1f} s, {rate:5.2f} rows/s, {rate / base:.2f}x -j 1, {rate / shell:.2f}x the shell loop, peak {peak / 1024:.0f} MiB, {same}")
    subprocess.run(["rm", "-rf", folder])


if __name__ == "__main__":
    main()
