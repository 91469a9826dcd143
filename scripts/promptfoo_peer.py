#!/usr/bin/env python3
"""`llmtool test` and promptfoo (`promptfoo eval`, from npm) on the same test suites and the
same answers: each example's test file is written for promptfoo (`llmtool test --to promptfoo`),
then both run it against the mock OpenAI server (`mock-llm`), and every case must get the same
verdict from both on every answer in ANSWERS. Each answer is a model of its own (`mock/a0`,
`mock/a1`, ...; the mock answers each from `MOCK_LLM_ANSWERS`), so one `llmtool test` and one
`promptfoo eval` per suite cover all the answers: promptfoo's start-up, not its evaluation, was
most of this step's time when each answer had an eval of its own.

promptfoo is installed once into target/peers-promptfoo (the last version that runs on Node
20, without its optional packages, plus the database binding it needs); it runs offline: its
telemetry, update check and sharing are off, and a proxy that leads nowhere stops the one
request its telemetry switch does not. Exits 1 when a verdict differs.
"""
import glob, json, os, shutil, subprocess, sys, tempfile, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import BUILD, build_binaries  # noqa: E402
from peers import LLMTOOL, ROOT  # noqa: E402

VERSION = "0.121.20"
FOLDER = os.environ.get("LLMTOOL_PROMPTFOO_DIR", os.path.join(ROOT, "target", "peers-promptfoo"))
PROMPTFOO = os.path.join(FOLDER, "node_modules", ".bin", "promptfoo")
MOCK = os.path.join(BUILD, "mock-llm")
# Answers that pass some assertions of the examples and fail others: plain text, Korean, JSON,
# code, and answers that meet a tool's expected output only once it is enforced.
ANSWERS = [
    "Here is the summary you asked for.",
    "안녕하세요. 회의 일정 확인 감사합니다. 화요일 오후 3시에 뵙겠습니다.",
    '{"verdict": "review", "risks": [{"clause": "termination", "severity": "high"}], "summary": "One risky clause."}',
    "SELECT name, total FROM orders WHERE total > 100 ORDER BY total DESC;",
    "def fizzbuzz(n):\n    return [str(i) for i in range(1, n + 1)]",
    # The expected output enforced before the assertions: a code block in prose, an allowed
    # value in quotes, JSON in a fence.
    "Here is the query:\n```sql\nSELECT name FROM users WHERE active;\n```\nIt lists the active users.",
    "\u201cGo.\u201d",
    '```json\n{"verdict": "sign", "risks": [], "summary": "Nothing risky."}\n```',
]


def log(message):
    print(f"[promptfoo] {message}", flush=True)


def install():
    installed = os.path.join(FOLDER, "node_modules", "promptfoo", "package.json")
    if os.path.exists(installed) and json.load(open(installed))["version"] == VERSION:
        return
    log(f"installing promptfoo {VERSION} (once)")
    os.makedirs(FOLDER, exist_ok=True)
    subprocess.run(["npm", "install", "--prefix", FOLDER, "--no-audit", "--no-fund", "--loglevel=error",
                    "--omit=optional", f"promptfoo@{VERSION}", "@libsql/linux-x64-gnu@0.5.29"], check=True)


MODELS = [f"mock/a{index}" for index in range(len(ANSWERS))]


def mock():
    answers = {model.split("/")[1]: answer for model, answer in zip(MODELS, ANSWERS)}
    process = subprocess.Popen([MOCK, "127.0.0.1:0", "4", "0"], stdout=subprocess.PIPE, text=True,
                               env=dict(os.environ, MOCK_LLM_ANSWERS=json.dumps(answers)))
    return process, process.stdout.readline().strip()


def answers_by_model(url):
    """Whether the mock gives each model its own answer: else every suite would compare the
    two tools on one answer eight times, and agree."""
    for model, answer in zip(MODELS, ANSWERS):
        body = json.dumps({"model": model.split("/")[1], "messages": [{"role": "user", "content": "q"}]})
        request = urllib.request.Request(f"{url}/v1/chat/completions", data=body.encode(),
                                         headers={"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            got = json.load(response)["choices"][0]["message"]["content"]
        if got != answer:
            log(f"the mock answered {model} with {got[:40]!r}, not {answer[:40]!r}")
            return False
    return True


def by_model(verdicts):
    """[(model, verdict)] in case order: {model: [verdict, ...]}."""
    grouped = {}
    for model, verdict in verdicts:
        grouped.setdefault(model, []).append(verdict)
    return grouped


def ours(suite, config, env):
    models = [flag for model in MODELS for flag in ("-m", model)]
    result = subprocess.run([LLMTOOL, "test", suite, *models, "--config", config, "--no-cache",
                             "--format", "json"], capture_output=True, text=True, env=env)
    if result.returncode not in (0, 1):
        raise RuntimeError(f"llmtool test {suite}: {result.stderr}")
    files = json.loads(result.stdout)
    return by_model((case["model"], case["pass"]) for case in files[0]["cases"])


def theirs(folder, work, env):
    results = os.path.join(work, "results.json")
    result = subprocess.run([PROMPTFOO, "eval", "-c", os.path.join(folder, "promptfooconfig.yaml"), "-o", results,
                             "--no-cache", "--no-progress-bar", "--no-write", "--no-table", "-j", "4"],
                            capture_output=True, text=True, env=env, cwd=folder)
    if result.returncode not in (0, 100):
        raise RuntimeError(f"promptfoo eval {folder}: {result.stdout[-1500:]}{result.stderr[-1500:]}")
    rows = sorted(json.load(open(results))["results"]["results"],
                  key=lambda row: row["testCase"]["metadata"]["llmtool_case"])
    return by_model((row["provider"].get("label") or row["provider"]["id"],
                     (row["success"], row.get("error") or "")) for row in rows)


def main():
    install()
    build_binaries()
    # The examples' test files, and one with a case for each kind of assertion.
    suites = sorted(glob.glob(os.path.join(ROOT, "examples", "*.tests.json")))
    suites.append(os.path.join(ROOT, "crates", "llmtool-convert", "tests", "fixtures", "promptfoo", "agreement.tests.json"))
    work = tempfile.mkdtemp(prefix="llmtool-promptfoo-")
    compared = differing = passed = 0
    server, url = mock()
    try:
        if not answers_by_model(url):
            sys.exit(1)
        config = os.path.join(work, "config.toml")
        with open(config, "w") as out:
            out.write(f'[providers.mock]\napi = "openai"\nbase_url = "{url}/v1"\napi_key_env = "MOCK_KEY"\n')
        exported = os.path.join(work, "exported")
        models = [flag for model in MODELS for flag in ("-m", model)]
        subprocess.run([LLMTOOL, "test", *suites, "--to", "promptfoo", "--out", exported, *models],
                       check=True, capture_output=True, text=True)
        base = {key: value for key, value in os.environ.items() if not key.startswith(("OPENAI_", "PROMPTFOO_"))}
        env = dict(base, MOCK_KEY="mock", NO_COLOR="1", LLMTOOL_DATA_DIR=os.path.join(work, "data"),
                   OPENAI_API_KEY="mock", OPENAI_BASE_URL=f"{url}/v1", HOME=os.path.join(work, "home"),
                   PROMPTFOO_CONFIG_DIR=os.path.join(work, "pf-config"), PROMPTFOO_CACHE_PATH=os.path.join(work, "pf-cache"),
                   PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1", PROMPTFOO_DISABLE_SHARING="1",
                   PROMPTFOO_DISABLE_REMOTE_GENERATION="1", PROMPTFOO_DISABLE_RUNTIME_WARNINGS="1",
                   NODE_NO_WARNINGS="1", HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9",
                   NO_PROXY="127.0.0.1,localhost")
        for suite in suites:
            name = os.path.basename(suite).removesuffix(".tests.json")
            mine = ours(suite, config, env)
            other = theirs(os.path.join(exported, name), work, env)
            if set(mine) != set(MODELS) or set(other) != set(MODELS):
                differing += 1
                log(f"DIFFERS {name}: models {sorted(mine)} in llmtool, {sorted(other)} in promptfoo")
                continue
            for model, answer in zip(MODELS, ANSWERS):
                for index, (a, (b, error)) in enumerate(zip(mine[model], other[model])):
                    compared += 1
                    passed += a and b
                    if a != b:
                        differing += 1
                        log(f"DIFFERS {name} case {index} on {answer[:30]!r}: llmtool {a}, promptfoo {b} {error[:200]}")
                if len(mine[model]) != len(other[model]):
                    differing += 1
                    log(f"DIFFERS {name} on {answer[:30]!r}: {len(mine[model])} cases in llmtool, "
                        f"{len(other[model])} in promptfoo")
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)
    log(f"{compared - differing} of {compared} verdicts agree ({len(suites)} suites, {len(ANSWERS)} answers; "
        f"{passed} cases pass on both, {compared - differing - passed} fail on both)")
    sys.exit(1 if differing or not compared else 0)


if __name__ == "__main__":
    main()
