#!/usr/bin/env python3
"""llmtool's prompt-file exports rendered by the peers' own code, installed from PyPI:
- Prompty (`prompty`): `prompty.load` then `prompty.prepare`, the messages it would send;
- Dotprompt (`dotpromptz`, Google's Python package): `Dotprompt().render`.
For every example (and a fixture full of characters the template languages treat specially),
with two sets of values (the required ones only, then every variable), the peer's rendered
prompt must equal `llmtool render`'s. The peers are installed under target/peers/
(idempotently; LLMTOOL_PEERS_DIR overrides). Exits 1 if a check fails.
"""
import json, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.environ.get("LLMTOOL_PEERS_DIR", os.path.join(ROOT, "target", "peers"))
PEERS = ["prompty[jinja2]==2.1.0", "dotpromptz==0.2.0", "dotpromptz-handlebars==0.2.0"]
PROBE = "import prompty, jinja2, dotpromptz"
LLMTOOL = os.path.join(ROOT, "target", "debug", "llmtool")
TOOLS = sorted(os.path.join(ROOT, "examples", f) for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".json"))
TOOLS.append(os.path.join(ROOT, "crates", "llmtool-core", "tests", "fixtures", "convert", "awkward-prompt.json"))
# A text value with what templates treat specially: quotes, braces, placeholders, `$`, a backslash.
AWKWARD = 'said "hi" {x} {{topic}} $topic ${x} $$ \\ é 주제'

# Runs inside the peers' environment: renders one file with one set of values.
RENDER = r'''
import asyncio, json, sys
fmt, path, values = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
if fmt == "prompty":
    import prompty
    messages = prompty.prepare(prompty.load(path), values)
    assert len(messages) == 1 and messages[0].role == "user", messages
    text = "".join(part.value for part in messages[0].parts)
else:
    from dotpromptz import Dotprompt
    from dotpromptz.typing import DataArgument
    rendered = asyncio.run(Dotprompt().render(open(path, encoding="utf-8").read(), DataArgument(input=values)))
    assert len(rendered.messages) == 1, rendered.messages
    text = "".join(part.text for part in rendered.messages[0].content)
print(json.dumps(text))
'''

# Lists the names the peer's file gives the inputs, in order.
NAMES = r'''
import json, sys, yaml
fmt, path = sys.argv[1], sys.argv[2]
front = yaml.safe_load(open(path, encoding="utf-8").read().split("\n---\n")[0].removeprefix("---\n")) or {}
if fmt == "prompty":
    names = list((front.get("inputs") or {}).keys())
else:
    names = list(((front.get("input") or {}).get("schema") or {}).get("properties", {}).keys())
print(json.dumps(names))
'''


def log(message):
    print(f"[peers] {message}", flush=True)


def peers_python():
    python = os.path.join(WORK, "bin", "python")
    if os.path.exists(python) and subprocess.run([python, "-c", PROBE], capture_output=True).returncode == 0:
        return python
    log(f"installing {', '.join(PEERS)} (once)")
    subprocess.run([sys.executable, "-m", "venv", WORK], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", *PEERS], check=True)
    return python


def llmtool(*args, stdin=None):
    result = subprocess.run([LLMTOOL, *args], capture_output=True, text=True, input=stdin)
    if result.returncode != 0:
        raise RuntimeError(f"llmtool {' '.join(args)}: {result.stderr}")
    return result.stdout


def variables(tool):
    """(name, kind, allowed values, required) for each variable, in order."""
    prompt = json.loads(llmtool("export", tool, "--to", "mcp-prompt"))
    schema = json.loads(llmtool("export", tool, "--to", "json-schema"))
    out = []
    for argument, (_, property) in zip(prompt["arguments"], schema["properties"].items()):
        if property["type"] == "array":
            out.append((argument["name"], "multi", property["items"]["enum"], argument["required"]))
        else:
            out.append((argument["name"], "single" if "enum" in property else "text", property.get("enum"), argument["required"]))
    return out


def value_sets(tool):
    required, every = {}, {}
    for name, kind, allowed, is_required in variables(tool):
        value = {"text": AWKWARD, "single": (allowed or [""])[-1], "multi": list(reversed((allowed or [])[-2:]))}[kind]
        every[name] = value
        if is_required:
            required[name] = value
    return [required, every]


def main():
    subprocess.run(["cargo", "build", "-q", "-p", "llmtool"], cwd=ROOT, check=True)
    python = peers_python()
    failures, checks = 0, 0
    with tempfile.TemporaryDirectory() as work:
        for tool in TOOLS:
            names = [name for name, *_ in variables(tool)]
            for fmt, extension in [("prompty", ".prompty"), ("dotprompt", ".prompt")]:
                exported = os.path.join(work, os.path.basename(tool) + extension)
                with open(exported, "w", encoding="utf-8") as out:
                    out.write(llmtool("export", tool, "--to", fmt))
                peer_names = json.loads(subprocess.run([python, "-c", NAMES, fmt, exported], capture_output=True, text=True, check=True).stdout)
                rename = dict(zip(names, peer_names))
                for values in value_sets(tool):
                    vars_file = os.path.join(work, "vars.json")
                    with open(vars_file, "w", encoding="utf-8") as out:
                        json.dump(values, out)
                    ours = llmtool("render", tool, "--vars", vars_file)
                    peer_values = {rename[name]: value for name, value in values.items()}
                    result = subprocess.run([python, "-c", RENDER, fmt, exported, json.dumps(peer_values)], capture_output=True, text=True)
                    checks += 1
                    label = f"{os.path.basename(tool)} via {fmt} with {len(values)} of {len(names)} values"
                    if result.returncode != 0:
                        failures += 1
                        log(f"FAIL {label}: the peer failed:\n{result.stderr[-2000:]}")
                        continue
                    theirs = json.loads(result.stdout)
                    if theirs != ours:
                        failures += 1
                        log(f"FAIL {label}:\n  ours:   {ours!r}\n  theirs: {theirs!r}")
    log(f"{checks - failures} of {checks} renderings equal")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
