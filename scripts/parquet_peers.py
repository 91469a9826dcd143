#!/usr/bin/env python3
"""`llmtool batch` on Parquet files written by others, and its Parquet output read by others.

Part of the test command. Installs pyarrow 26.0.1 (Apache Arrow's own Parquet implementation)
and polars 2.1.0 (a Parquet writer and reader of its own) once into target/parquet-peers, then:

1. writes one dataset (a text column with a null, a list-of-strings column for a
   multi-select, an integer id) with pyarrow in snappy, zstd and gzip, and with polars;
2. runs `llmtool batch` (as the test command builds it) on each against
   mock-llm, to a Parquet output and to a JSON Lines output;
3. reads the Parquet output with pyarrow and with polars: one record per row, the ids of the
   dataset, the row with no text `invalid`, the others `ok`, the tags passed as a list, and
   every field but the latency equal to the JSON Lines records (a run of its own).

Exits 1 on any difference.
"""
import json, os, subprocess, sys, tempfile

from checks import BUILD, LLMTOOL, venv_python

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, "target", "parquet-peers")
PACKAGES = ["pyarrow==26.0.1", "polars==2.1.0"]
MOCK = os.path.join(BUILD, "mock-llm")

TOOL = {"model_prompt": "Label {{text}} with {{tags}}.",
        "metadata": {"prompt_name": "Labeller", "description": "A label.", "model_version": ["mock/m"],
                     "variables": [{"name": "text", "type": "text", "description": "The text."},
                                   {"name": "tags", "type": "multi-select", "description": "Tags.", "allowed_values": ["a", "b", "c"]}],
                     "expected_output": {"type": "text"}}}

# Run inside the venv: writes the datasets, or checks an output against its JSON Lines twin.
PEER = r'''
import json, sys
import pyarrow as pa, pyarrow.parquet as pq, polars as pl
command, folder = sys.argv[1], sys.argv[2]
if command == "write":
    table = pa.table({
        "ticket": pa.array([100 + n for n in range(12)], pa.int64()),
        "text": pa.array([None if n == 5 else f"item {n}, with a comma" for n in range(12)]),
        "tags": pa.array([["a", "b"] if n % 2 else ["c"] for n in range(12)], pa.list_(pa.string())),
    })
    for codec in ("snappy", "zstd", "gzip"):
        pq.write_table(table, f"{folder}/pyarrow-{codec}.parquet", compression=codec, row_group_size=5)
    pl.from_arrow(table).write_parquet(f"{folder}/polars.parquet")
else:
    name = sys.argv[3]
    expected = sorted((json.loads(l) for l in open(f"{folder}/{name}.jsonl")), key=lambda r: r["row"])
    for reader, rows in (("pyarrow", pq.read_table(f"{folder}/{name}.parquet").to_pylist()),
                         ("polars", pl.read_parquet(f"{folder}/{name}.parquet").to_dicts())):
        rows = sorted(rows, key=lambda r: r["row"])
        if len(rows) != 12 or [r["id"] for r in rows] != [str(100 + n) for n in range(12)]:
            sys.exit(f"{name} by {reader}: ids {[r['id'] for r in rows]}")
        for got, want in zip(rows, expected):
            if got["outcome"] != ("invalid" if got["id"] == "105" else "ok"):
                sys.exit(f"{name} by {reader}: {got}")
            # Two runs: everything but the time taken is the same.
            if {k: got[k] for k in want if k != "latency_ms"} != {k: v for k, v in want.items() if k != "latency_ms"}:
                sys.exit(f"{name} by {reader}: {got} differs from the JSON Lines record {want}")
    print(f"{name}: 12 records, read alike by pyarrow and polars")
'''


def main():
    python = venv_python(VENV, PACKAGES, "import pyarrow, polars", lambda m: print(f"[parquet] {m}", flush=True))
    folder = tempfile.mkdtemp(prefix="llmtool-parquet-")
    subprocess.run([python, "-c", PEER, "write", folder], check=True)
    with open(os.path.join(folder, "tool.json"), "w") as tool:
        json.dump(TOOL, tool)
    mock = subprocess.Popen([MOCK, "127.0.0.1:0", "3"], stdout=subprocess.PIPE, text=True)
    try:
        url = mock.stdout.readline().strip()
        with open(os.path.join(folder, "config.toml"), "w") as config:
            config.write(f'[providers.mock]\napi = "openai"\nbase_url = "{url}/v1"\napi_key_env = "MOCK_KEY"\n')
        env = {**os.environ, "MOCK_KEY": "parquet-check", "LLMTOOL_DATA_DIR": os.path.join(folder, "data")}
        for name in ("pyarrow-snappy", "pyarrow-zstd", "pyarrow-gzip", "polars"):
            for out in (f"{name}.parquet", f"{name}.jsonl"):
                done = subprocess.run([LLMTOOL, "batch", "tool.json", f"{name}.parquet",
                                       "-o", f"out-{out}", "--id", "ticket", "--config", "config.toml"],
                                      cwd=folder, env=env, capture_output=True, text=True)
                # The row with no text is invalid, so the batch exits 1; anything else is a failure.
                if done.returncode != 1 or "11 ok" not in done.stderr or "1 invalid" not in done.stderr:
                    sys.exit(f"llmtool batch {name} -o {out}: exit {done.returncode}: {done.stderr}")
            check = subprocess.run([python, "-c", PEER, "check", folder, f"out-{name}"], text=True)
            if check.returncode != 0:
                sys.exit(1)
    finally:
        mock.terminate()
    subprocess.run(["rm", "-rf", folder])
    print("[parquet] every outside Parquet file read, every output read back alike: ok")


if __name__ == "__main__":
    main()
