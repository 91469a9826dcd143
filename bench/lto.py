#!/usr/bin/env python3
"""What link-time optimisation buys at run time (issue 67): the release build, which has none,
against `--profile dist` (the release profile with thin LTO), on the figures it could move.

usage: bench/lto.py [FILES=10000] [RUNS=5]

Builds both profiles of llmtool (the dist build takes about half an hour cold on 2 cores),
then measures, each pair interleaved so that the machine's drift hits both alike:
1. `llmtool check` over FILES tool files written by bench/corpus.py (seed 7), RUNS rounds
   (bench/timing.py);
2. the local model: `llmtool run examples/teach-me-anything.json --model local --seed 1`, the
   whole process (loading the model, the prompt, the decode of the same answer), RUNS rounds;
3. the server: `llmtool serve` (SQLite, public reading, no rate limit), `wrk -t2 -c32 -d10s`
   on GET /api/v1/tools/teach-me-anything, three interleaved rounds, each side's median.

Prints each figure and the ratio of dist to release (for times, below 1 means LTO made it
faster; for requests per second, above 1). Needs wrk (Debian's package; installed if missing,
as root).

`LLMTOOL_BENCH_BUILDS="NAME=PATH,NAME=PATH"` compares two binaries built beforehand instead
(say, the workspace's crates at `opt-level = 1` against 3); nothing is built then, and the
ratio is the second's to the first's.
"""
import os, re, shutil, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
RUNS = sys.argv[2] if len(sys.argv) > 2 else "5"
GIVEN = os.environ.get("LLMTOOL_BENCH_BUILDS")
if GIVEN:
    BUILDS = dict(pair.split("=", 1) for pair in GIVEN.split(","))
else:
    BUILDS = {"release": os.path.join(ROOT, "target", "release", "llmtool"),
              "dist": os.path.join(ROOT, "target", "dist", "llmtool")}
FIRST, SECOND = list(BUILDS)


def timing(*commands):
    """bench/timing.py's lines for the labelled commands."""
    pairs = [f"{label}={command}" for label, command in commands]
    out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "timing.py"), RUNS, *pairs],
                         capture_output=True, text=True, check=True).stdout
    print(out, end="", flush=True)


def requests_per_second(url):
    out = subprocess.run(["wrk", "-t2", "-c32", "-d10s", url], capture_output=True, text=True, check=True).stdout
    if "Non-2xx" in out:
        sys.exit(f"{url}: failed responses:\n{out}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))


def serve(llmtool, data):
    server = subprocess.Popen([llmtool, "serve", "--listen", "127.0.0.1:0", "--public-read", "--rate-limit", "0"],
                              env={**os.environ, "LLMTOOL_DATA_DIR": data, "LLMTOOL_NO_LOG": "1"},
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in server.stderr:
        if line.startswith("llmtool serve: http://"):
            return server, line.split()[2]
    sys.exit("llmtool serve did not start")


def main():
    if not shutil.which("wrk"):
        subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=True)
    if not GIVEN:
        for profile in BUILDS:
            subprocess.run(["cargo", "build", "-q", "--locked", "--profile", profile, "-p", "llmtool"], cwd=ROOT, check=True)
    for profile, path in BUILDS.items():
        print(f"{profile}: {os.path.getsize(path):,} bytes")

    corpus = os.path.join(ROOT, "bench", "out", f"corpus-{FILES}")
    if not os.path.isdir(corpus):
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "corpus.py"), corpus, str(FILES), "7"], check=True)
    print(f"\n1. llmtool check over {FILES} files, {RUNS} rounds:")
    timing(*((profile, f"{path} check {corpus}") for profile, path in BUILDS.items()))

    subprocess.run([BUILDS[FIRST], "model", "pull"], check=True, stdout=subprocess.DEVNULL)
    tool = os.path.join(ROOT, "examples", "teach-me-anything.json")
    print(f"\n2. llmtool run on the local model (seed 1), {RUNS} rounds:")
    timing(*((profile, f"{path} run {tool} --var topic=tides --model local --seed 1")
             for profile, path in BUILDS.items()))

    print("\n3. llmtool serve, GET /api/v1/tools/teach-me-anything, wrk -t2 -c32 -d10s, 3 rounds:")
    rates = {profile: [] for profile in BUILDS}
    work = tempfile.mkdtemp()
    try:
        for _ in range(3):
            for profile, path in BUILDS.items():
                server, api = serve(path, os.path.join(work, profile))
                try:
                    rates[profile].append(requests_per_second(f"{api}/tools/teach-me-anything"))
                finally:
                    server.terminate()
                    server.wait()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for profile, found in rates.items():
        print(f"{profile:<10} median {statistics.median(found):9.0f} req/s  (rounds: {', '.join(f'{r:.0f}' for r in found)})")
    ratio = statistics.median(rates[SECOND]) / statistics.median(rates[FIRST])
    print(f"{SECOND} / {FIRST}: {ratio:.2f}x the requests per second")


if __name__ == "__main__":
    main()
