#!/usr/bin/env python3
"""The test command's guard against a slower `check`: llmtool against ajv on the same files.

usage: bench/check_guard.py LLMTOOL [FILES=1000] [RUNS=5]

Writes FILES tool files with bench/corpus.py (once, under bench/out/), then times
`LLMTOOL check` (every semantic check) and ajv (the JSON Schema only, bench/ajv-validate.mjs)
over the folder, each a whole process, in RUNS interleaved rounds after a warm-up one. Prints
both medians and the ratio, and fails (exit 1) only when llmtool is slower than ajv: a ratio,
not a time, so a busy machine slows both and cannot fail it. The test command runs it on the
release build it already has (the one build it makes).
"""
import os, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(command):
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    # Exit 1 is a tool file with problems (the corpus has a few, on purpose); more is a failure.
    if done.returncode not in (0, 1):
        sys.exit(f"{command[0]} failed with exit status {done.returncode}")
    return elapsed


def main():
    llmtool = os.path.abspath(sys.argv[1])
    files = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    corpus = os.path.join(ROOT, "bench", "out", f"guard-corpus-{files}")
    if not os.path.isdir(corpus):
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "corpus.py"), corpus + ".part", str(files), "7"], check=True)
        os.rename(corpus + ".part", corpus)
    ajv = ["node", os.path.join(ROOT, "bench", "ajv-validate.mjs"), os.path.join(ROOT, "schema", "llm-tool.schema.json"), corpus]
    ours = [llmtool, "check", corpus]
    times = {"llmtool": [], "ajv": []}
    for round_ in range(runs + 1):
        for name, command in (("llmtool", ours), ("ajv", ajv)):
            elapsed = timed(command)
            if round_ > 0:
                times[name].append(elapsed)
    llmtool_ms, ajv_ms = (statistics.median(times[name]) * 1000 for name in ("llmtool", "ajv"))
    print(f"check over {files} files, median of {runs}: llmtool {llmtool_ms:.1f} ms, ajv {ajv_ms:.1f} ms: "
          f"{ajv_ms / llmtool_ms:.2f}x ajv's speed")
    if llmtool_ms > ajv_ms:
        sys.exit("llmtool check is slower than ajv on the same files: a performance regression")


if __name__ == "__main__":
    main()
