#!/usr/bin/env python3
"""The README's short tour, run top to bottom as a new user would: with no API key.

Each line of the first `sh` block under "## A short tour" runs in a fresh folder that holds a
copy of examples/, with the built `llmtool` first on PATH, no provider key, and a data directory
and config of its own (the local model the test command pulled is shared through
LLMTOOL_MODELS_DIR, and so are the answers the examples step cached, when it ran first: the tour's
`llmtool test examples/ --model local --seed 3` is that step's run again, and reads them from its
cache instead of computing them a second time). A line must exit 0, unless this file says why it cannot here, and then it
must exit 2 with the message that says so. No line may panic, and each `run` that falls back
from the tool's model to the local model must say so on stderr: no surprise.

usage: scripts/readme_tour.py [LLMTOOL]   (default: the test build's, checks.LLMTOOL)
"""
import os, re, shutil, subprocess, sys, tempfile, time

import checks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLMTOOL = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else checks.LLMTOOL)
# The answers of `llmtool test examples/ --model local --seed 3`, as scripts/example_tests.py
# left them.
EXAMPLE_ANSWERS = os.path.join(ROOT, "target", "example-tests", "test-cache")
KEYS = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "LLMTOOL_MODEL",
        "LLMTOOL_TOKEN", "LLMTOOL_REGISTRY", "LLMTOOL_CONFIG"]

# Lines that cannot succeed on a machine with no key, and what they must say instead.
EXPECTED_FAILURES = {
    "--model anthropic/": "ANTHROPIC_API_KEY",
    "local:path/to/model.gguf": "path/to/model.gguf",
}


def tour_lines():
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    block = re.search(r"## A short tour\n\n```sh\n(.*?)```", readme, re.S)
    if not block:
        sys.exit("README.md has no `sh` block under '## A short tour'")
    return [line for line in block.group(1).splitlines() if line.strip()]


def main():
    lines = tour_lines()
    work = tempfile.mkdtemp(prefix="llmtool-tour-")
    failures = []
    try:
        shutil.copytree(os.path.join(ROOT, "examples"), os.path.join(work, "examples"))
        if os.path.isdir(EXAMPLE_ANSWERS):
            # Private, as llmtool makes its data directory (it would narrow it and say so).
            os.makedirs(os.path.join(work, "data"), mode=0o700)
            shutil.copytree(EXAMPLE_ANSWERS, os.path.join(work, "data", "test-cache"))
        env = {k: v for k, v in os.environ.items() if k not in KEYS}
        if not env.get("LLMTOOL_MODELS_DIR"):
            # The tour's data directory is new: it shares the model pulled where llmtool keeps it.
            pulled = subprocess.run([LLMTOOL, "model", "pull"], capture_output=True, text=True, check=True)
            env["LLMTOOL_MODELS_DIR"] = os.path.dirname(pulled.stdout.strip())
        env.update(PATH=os.path.dirname(LLMTOOL) + os.pathsep + env.get("PATH", ""), NO_COLOR="1",
                   LLMTOOL_DATA_DIR=os.path.join(work, "data"), XDG_CONFIG_HOME=os.path.join(work, "config"))
        for number, line in enumerate(lines, 1):
            started = time.monotonic()
            result = subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=work, env=env, stdin=subprocess.DEVNULL,
                                    capture_output=True, text=True, timeout=900)
            said = result.stderr
            expected = next((said_instead for marker, said_instead in EXPECTED_FAILURES.items() if marker in line), None)
            problem = None
            if "panicked" in said:
                problem = "panicked"
            elif expected is None and result.returncode != 0:
                problem = f"exit {result.returncode}"
            elif expected is not None and (result.returncode != 2 or expected not in said):
                problem = f"exit {result.returncode}, expected 2 with a message naming {expected}"
            elif expected is None and re.search(r"\bllmtool run\b", line) and "--model local" not in line and "--dry-run" not in line \
                    and "note:" not in said:
                problem = "ran a model other than the tool's without a note on stderr"
            mark = "ok  " if problem is None else "FAIL"
            print(f"{mark} {number:2} {time.monotonic() - started:6.1f} s  {line[:100]}", flush=True)
            if problem:
                failures.append(f"line {number}: {line}\n  {problem}\n  stderr: {said.strip()[:2000]}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(1)
    print(f"the README's tour: {len(lines)} lines ran as written, with no key")


if __name__ == "__main__":
    main()
