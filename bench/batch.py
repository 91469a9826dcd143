#!/usr/bin/env python3
"""`llmtool batch` against the ideal (run by bench/batch.sh).

usage: bench/batch.py [ROWS=10000] [BIG=1000000]

1. Throughput: ROWS rows of a one-variable tool, run by `llmtool batch -j 64` (release build)
   against mock-llm (crates/llmtool-testkit) holding every answer back 50 ms. The ideal is
   concurrency / latency = 64 / 0.05 s = 1,280 rows a second; the figure is rows per second
   over the whole command (start, reading, journal and output included), and its ratio to the
   ideal. Also at -j 16 and -j 256.
2. Memory: peak resident memory of the same batch over ROWS and over BIG rows, with no
   latency (so BIG rows take minutes, not hours): the children's ru_maxrss (getrusage), which
   is the largest of any child so far, so the runs go from the smallest up.
3. A rerun of the BIG batch, every row already done: how long skipping takes.
"""
import os, resource, subprocess, sys, tempfile, time

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
BIG = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELEASE = os.path.join(ROOT, "target", "release")
LATENCY_MS = 50

TOOL = """{"model_prompt": "Classify the sentiment of this review as positive, negative or neutral: {{review}}",
 "metadata": {"prompt_name": "Sentiment", "description": "One word.", "model_version": ["mock/m"],
  "variables": [{"name": "review", "type": "text", "description": "The review."}],
  "expected_output": {"type": "text"}}}"""


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


def batch(folder, url, data, out, jobs):
    """Runs the batch: (seconds, peak resident KiB, stderr)."""
    with open(os.path.join(folder, "config.toml"), "w") as config:
        config.write(f'[providers.mock]\napi = "openai"\nbase_url = "{url}/v1"\napi_key_env = "MOCK_KEY"\n')
    env = {**os.environ, "MOCK_KEY": "bench", "LLMTOOL_DATA_DIR": os.path.join(folder, "data")}
    command = [os.path.join(RELEASE, "llmtool"), "batch", os.path.join(folder, "tool.json"), data,
               "-o", out, "--id", "id", "-j", str(jobs), "--config", os.path.join(folder, "config.toml")]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if done.returncode != 0:
        sys.exit(f"batch failed ({done.returncode}): {done.stderr}")
    # ru_maxrss of the children is the largest of any child so far: runs go smallest first.
    return seconds, max(peak, before), done.stderr.strip()


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
    subprocess.run(["rm", "-rf", folder])


if __name__ == "__main__":
    main()
