#!/usr/bin/env python3
"""Exported tools run by agent frameworks, with the lines docs/convert.md shows: LangChain's
`StructuredTool`, the OpenAI Agents SDK's `FunctionTool` and Vercel's AI SDK `tool()` each take
a tool's schema from `llmtool export --to openai --with-runner` (strict, for the Agents SDK)
and run `llmtool call` when the model calls it. Each is invoked as its framework invokes a
tool the model chose, with the model's arguments, and must return the mock provider's answer;
a value of the wrong type must come back as an error message.

Installs langchain-core and openai-agents into target/agent-frameworks/venv, and the `ai`
package into target/agent-frameworks/node, once. Needs llmtool and mock-llm, built (checks.BUILD).
Exits 1 if a check fails.
"""
import json, os, shutil, subprocess, sys, tempfile

from checks import BUILD, venv_python

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "target", "agent-frameworks")
HERE = os.path.join(ROOT, "scripts", "agent_frameworks")
DEBUG = BUILD
PACKAGES = ["langchain-core==1.8.1", "openai-agents==0.24.0"]
PROBE = "import langchain_core, agents"
AI_SDK = "ai@7.0.173"
ANSWER = "Tides follow the Moon."


def log(message):
    print(f"[agent-frameworks] {message}", flush=True)


def node_folder():
    """The folder where the AI SDK is installed, with the snippet beside its node_modules."""
    folder = os.path.join(WORK, "node")
    if not os.path.isdir(os.path.join(folder, "node_modules", "ai")):
        log(f"installing {AI_SDK} (once)")
        os.makedirs(folder, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", folder, "--no-audit", "--no-fund", "--loglevel=error", AI_SDK], check=True)
    # Node finds `ai` from the script's own folder.
    shutil.copy(os.path.join(HERE, "ai_sdk_tool.mjs"), folder)
    return folder


def main():
    python = venv_python(os.path.join(WORK, "venv"), PACKAGES, PROBE, log)
    node = node_folder()
    mock = subprocess.Popen([os.path.join(DEBUG, "mock-llm"), "127.0.0.1:0"], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "MOCK_LLM_ANSWER": ANSWER})
    failures = []
    try:
        url = mock.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as work:
            config = os.path.join(work, "config.toml")
            with open(config, "w", encoding="utf-8") as out:
                out.write(f'[providers.mock]\napi = "openai"\nbase_url = "{url}/v1"\napi_key_env = "MOCK_KEY"\n')
            # The frameworks run `llmtool` from PATH, as the exported command names it.
            env = {**os.environ, "PATH": f"{DEBUG}:{os.environ.get('PATH', '')}", "LLMTOOL_CONFIG": config,
                   "LLMTOOL_DATA_DIR": os.path.join(work, "data"), "LLMTOOL_MODEL": "mock/m", "MOCK_KEY": "sk-mock"}
            tool = os.path.join(ROOT, "examples", "teach-me-anything.json")
            exports = {}
            for name, flags in [("plain", []), ("strict", ["--strict-schema"])]:
                path = os.path.join(work, f"{name}.json")
                done = subprocess.run(["llmtool", "export", tool, "--to", "openai", "--with-runner", *flags],
                                      capture_output=True, text=True, env=env, check=True)
                with open(path, "w", encoding="utf-8") as out:
                    out.write(done.stdout)
                exports[name] = path
            runs = [
                ("LangChain StructuredTool", [python, os.path.join(HERE, "langchain_tool.py"), exports["plain"]]),
                ("OpenAI Agents SDK FunctionTool", [python, os.path.join(HERE, "openai_agents_tool.py"), exports["strict"]]),
                ("Vercel AI SDK tool()", ["node", os.path.join(node, "ai_sdk_tool.mjs"), exports["plain"]]),
            ]
            for label, command in runs:
                for arguments, expected in [('{"topic": "tides", "level": null}', ANSWER), ('{"topic": "tides"}', ANSWER)]:
                    if "Agents" not in label and "null" in arguments:
                        continue  # only a strict schema sends null for an optional parameter
                    done = subprocess.run([*command, arguments], capture_output=True, text=True, env=env, timeout=120)
                    answer = json.loads(done.stdout).get("answer") if done.returncode == 0 and done.stdout.strip() else None
                    ok = answer == expected
                    print(("ok   " if ok else "FAIL ") + f"{label} with {arguments}" + ("" if ok else f": {answer!r} {done.stderr.strip()[-400:]}"))
                    if not ok:
                        failures.append(label)
            # A wrong type is the model's mistake: an error message the model can read.
            done = subprocess.run([python, os.path.join(HERE, "openai_agents_tool.py"), exports["strict"],
                                   '{"topic": ["a", "b"], "level": null}'], capture_output=True, text=True, env=env, timeout=120)
            said = json.loads(done.stdout).get("answer", "") if done.returncode == 0 else done.stderr
            ok = said.startswith("Error:") and "`topic` must be a string, found an array" in said
            print(("ok   " if ok else "FAIL ") + "a wrong argument type comes back as a message" + ("" if ok else f": {said!r}"))
            if not ok:
                failures.append("wrong type")
    finally:
        mock.terminate()
        mock.wait(timeout=10)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("every framework ran the exported tool")
    return 0


if __name__ == "__main__":
    sys.exit(main())
