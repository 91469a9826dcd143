#!/usr/bin/env python3
"""`llmtool test` against promptfoo (`promptfoo eval`, from npm) on the same test suite: CASES
cases of one prompt, each with the same three assertions (contains, regex, not-contains), sent
to the mock OpenAI server (`mock-llm`, every answer held back LATENCY_MS) at the same
concurrency. Two figures, each the median of RUNS interleaved rounds after a warm-up:

- a cold run: nothing cached (`llmtool test --no-cache`, `promptfoo eval --no-cache`);
- a rerun: every answer in the tool's own cache, so nothing is sent.

Also the peak memory (maximum resident set) of each. promptfoo runs with `--no-write` (its
results are not stored in its database) and without its progress bar, which only spares it work.

usage: bench/test_suite.py [CASES=300] [RUNS=5] [JOBS=8] [LATENCY_MS=20]
Installs promptfoo once into target/bench-promptfoo/ (the last version that runs on Node 20).
"""
import json, os, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mock_server import LLMTOOL, ROOT  # noqa: E402

PROMPTFOO_VERSION = "0.121.20"
PROMPTFOO_DIR = os.path.join(ROOT, "target", "bench-promptfoo")
PROMPTFOO = os.path.join(PROMPTFOO_DIR, "node_modules", ".bin", "promptfoo")


def install_promptfoo():
    installed = os.path.join(PROMPTFOO_DIR, "node_modules", "promptfoo", "package.json")
    if os.path.exists(installed) and json.load(open(installed))["version"] == PROMPTFOO_VERSION:
        return
    os.makedirs(PROMPTFOO_DIR, exist_ok=True)
    subprocess.run(["npm", "install", "--prefix", PROMPTFOO_DIR, "--no-audit", "--no-fund", "--loglevel=error",
                    f"promptfoo@{PROMPTFOO_VERSION}"], check=True)


def timed(command, env):
    """Runs `command`; its wall time in seconds and its peak memory in MiB."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    stderr = process.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{command[0]} failed ({os.waitstatus_to_exitcode(status)}): {stderr[-2000:]}")
    return elapsed, usage.ru_maxrss / 1024


def write_suites(work, url, cases):
    texts = [f"review number {i}: the delivery was late but the support team was kind" for i in range(cases)]
    tool = {"model_prompt": "Summarise in one line: {{text}}",
            "metadata": {"prompt_name": "Summary", "description": "One line.",
                         "variables": [{"name": "text", "type": "text", "description": "The text."}]}}
    json.dump(tool, open(os.path.join(work, "summary.json"), "w"))
    checks = [{"type": "contains", "value": "token3"}, {"type": "regex", "value": "token\\d+"},
              {"type": "not_contains", "value": "error"}]
    json.dump({"cases": [{"name": f"case {i}", "vars": {"text": t}, "assert": checks} for i, t in enumerate(texts)]},
              open(os.path.join(work, "summary.tests.json"), "w"))
    config = {
        "prompts": ["Summarise in one line: {{text}}"],
        "providers": [{"id": "openai:chat:m", "config": {"apiBaseUrl": f"{url}/v1", "apiKey": "mock"}}],
        "tests": [{"vars": {"text": t}, "assert": [{"type": "contains", "value": "token3"},
                                                   {"type": "regex", "value": "token\\d+"},
                                                   {"type": "not-contains", "value": "error"}]} for t in texts],
    }
    json.dump(config, open(os.path.join(work, "promptfooconfig.json"), "w"))


def main():
    given = [int(a) for a in sys.argv[1:5]]
    cases, runs, jobs, latency = given + [300, 5, 8, 20][len(given):]
    install_promptfoo()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "llmtool", "-p", "llmtool-testkit"], cwd=ROOT, check=True)
    mock = subprocess.Popen([os.path.join(ROOT, "target/release/mock-llm"), "127.0.0.1:0", "20", str(latency)],
                            stdout=subprocess.PIPE, text=True)
    url = mock.stdout.readline().strip()
    work = tempfile.mkdtemp()
    try:
        write_suites(work, url, cases)
        config = os.path.join(work, "config.toml")
        open(config, "w").write(f'[providers.mock]\napi = "openai"\nbase_url = "{url}/v1"\napi_key_env = "MOCK_KEY"\n')
        env = dict(os.environ, MOCK_KEY="mock", NO_COLOR="1", LLMTOOL_DATA_DIR=os.path.join(work, "llmtool-data"),
                   OPENAI_API_KEY="mock", PROMPTFOO_CONFIG_DIR=os.path.join(work, "promptfoo-config"),
                   PROMPTFOO_CACHE_PATH=os.path.join(work, "promptfoo-cache"), PROMPTFOO_DISABLE_TELEMETRY="1",
                   PROMPTFOO_DISABLE_UPDATE="1", PROMPTFOO_DISABLE_SHARING="1")
        llmtool = [LLMTOOL, "test", os.path.join(work, "summary.tests.json"), "-m", "mock/m", "--config", config,
                   "-j", str(jobs)]
        promptfoo = [PROMPTFOO, "eval", "-c", os.path.join(work, "promptfooconfig.json"), "--no-write",
                     "--no-progress-bar", "--no-table", "-j", str(jobs)]
        commands = {
            "llmtool test, cold": llmtool + ["--no-cache"],
            "promptfoo eval, cold": promptfoo + ["--no-cache"],
            "llmtool test, rerun from its cache": llmtool,
            "promptfoo eval, rerun from its cache": promptfoo,
        }
        times = {label: [] for label in commands}
        memory = {label: [] for label in commands}
        for round_ in range(runs + 1):  # the first round warms up, and fills both caches
            for label, command in commands.items():
                elapsed, peak = timed(command, env)
                if round_ > 0:
                    times[label].append(elapsed)
                    memory[label].append(peak)
        ideal = cases * latency / 1000 / jobs
        print(f"{cases} cases, 3 assertions each, -j {jobs}, answers held back {latency} ms "
              f"(ideal cold run {ideal * 1000:.0f} ms); median of {runs} rounds")
        for kind in ("cold", "rerun from its cache"):
            ours, theirs = f"llmtool test, {kind}", f"promptfoo eval, {kind}"
            for label in (ours, theirs):
                print(f"  {label:<38} {statistics.median(times[label]) * 1000:8.0f} ms  "
                      f"(min {min(times[label]) * 1000:.0f}, max {max(times[label]) * 1000:.0f})  "
                      f"peak {max(memory[label]):6.1f} MiB")
            ratio = statistics.median(times[theirs]) / statistics.median(times[ours])
            print(f"  {kind}: llmtool takes {1 / ratio:.3f}x promptfoo's time ({ratio:.1f}x faster); "
                  f"memory {max(memory[ours]) / max(memory[theirs]):.3f}x")
    finally:
        mock.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
