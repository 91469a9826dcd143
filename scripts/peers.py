#!/usr/bin/env python3
"""llmtool's prompt-file exports rendered by the peers' own code, installed from PyPI:
- Prompty (`prompty`): `prompty.load` then `prompty.prepare`, the messages it would send;
- Dotprompt (`dotpromptz`, Google's Python package): `Dotprompt().render`;
- the `llm` CLI (`llm`): `load_template` then `Template.evaluate`, as `llm -t` does;
- Semantic Kernel (`semantic-kernel`): `KernelFunctionFromPrompt.from_directory`, its defaults,
  then its template's `render`; checked twice: the template alone (values not HTML-encoded), and
  the message Semantic Kernel sends by default (values encoded, then decoded by its parser).
- Langfuse (`langfuse`, its Python SDK, in an environment of its own): `TextPromptClient` (or
  `ChatPromptClient`) `.compile`, with every value (Langfuse has no defaults); an export that
  says Langfuse reads its prompt otherwise (LT708) is counted apart, not compared.
For every example (and a fixture full of characters the template languages treat specially),
with two sets of values (the required ones only, then every variable), the peer's rendered
prompt must equal `llmtool render`'s. Chat tools (`"x-chat": true`) are exported to the formats
that have messages (Prompty, Dotprompt, Semantic Kernel's `<message>` elements), and the
messages each peer sends must be those `llmtool run --dry-run` sends (Prompty and Dotprompt
trim a message's ends, so the comparison does too for them). The peers are installed under target/peers/
(idempotently; LLMTOOL_PEERS_DIR overrides). Exits 1 if a check fails.
"""
import json, os, re, subprocess, sys, tempfile

from checks import LLMTOOL, venv_python, build_binaries

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.environ.get("LLMTOOL_PEERS_DIR", os.path.join(ROOT, "target", "peers"))
PEERS = ["prompty[jinja2]==2.1.0", "dotpromptz==0.2.0", "dotpromptz-handlebars==0.2.0", "llm==0.36", "semantic-kernel==1.45.0", "chevron==0.14.0"]
PROBE = "import prompty, jinja2, dotpromptz, llm, semantic_kernel, chevron"
# The peers: the export target, and how the peer's check is named.
FORMATS = ["prompty", "dotprompt", "llm-template", "semantic-kernel", "semantic-kernel-message"]
TOOLS = sorted(os.path.join(ROOT, "examples", f) for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".json") and not f.endswith(".tests.json"))
TOOLS.append(os.path.join(ROOT, "crates", "llmtool-convert", "tests", "fixtures", "convert", "awkward-prompt.json"))
LANGFUSE = (os.path.join(ROOT, "target", "peers-langfuse"), ["langfuse==5.0.4"], "import langfuse.model")
# Runs in Langfuse's environment: compiles the prompt object in a file with values.
LANGFUSE_RENDER = r'''
import json, logging, sys
logging.disable(logging.WARNING)
from langfuse.api import Prompt_Chat, Prompt_Text
from langfuse.model import ChatPromptClient, TextPromptClient
prompt = json.load(open(sys.argv[1], encoding="utf-8"))
values = {name: ", ".join(v) if isinstance(v, list) else v for name, v in json.loads(sys.argv[2]).items()}
fields = {"name": prompt["name"], "version": 1, "config": prompt["config"], "labels": prompt["labels"], "tags": prompt["tags"]}
if prompt["type"] == "chat":
    messages = ChatPromptClient(Prompt_Chat(prompt=prompt["prompt"], **fields)).compile(**values)
    print(json.dumps("\n\n".join(f"{m['role']}:\n{m['content']}" for m in messages)))
else:
    print(json.dumps(TextPromptClient(Prompt_Text(prompt=prompt["prompt"], **fields)).compile(**values)))
'''
# Chat tools, and the formats whose exports keep their turns as messages.
CHATS = [os.path.join(ROOT, "crates", "llmtool-format", "tests", "fixtures", "valid", f) for f in ("chat-prompt.json", "chat-awkward.json")]
CHAT_FORMATS = ["prompty", "dotprompt", "semantic-kernel"]
# Runs inside the peers' environment: the messages one export of a chat sends, as [role, text].
MESSAGES = r'''
import asyncio, json, logging, sys
logging.disable(logging.WARNING)
fmt, path, values = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
if fmt == "prompty":
    import prompty
    sent = [[m.role, "".join(part.value for part in m.parts)] for m in prompty.prepare(prompty.load(path), values)]
elif fmt == "dotprompt":
    from dotpromptz import Dotprompt
    from dotpromptz.typing import DataArgument
    rendered = asyncio.run(Dotprompt().render(open(path, encoding="utf-8").read(), DataArgument(input=values)))
    sent = [[str(getattr(m.role, "value", m.role)), "".join(part.text for part in m.content)] for m in rendered.messages]
else:
    from semantic_kernel import Kernel
    from semantic_kernel.contents import ChatHistory
    from semantic_kernel.functions import KernelArguments, KernelFunctionFromPrompt
    function = KernelFunctionFromPrompt.from_directory(path)
    arguments = KernelArguments(**values)
    function.update_arguments_with_defaults(arguments)
    rendered = asyncio.run(function.prompt_template.render(Kernel(), arguments))
    sent = [[str(m.role.value), m.content] for m in ChatHistory.from_rendered_prompt(rendered).messages]
print(json.dumps(sent))
'''

# A text value with what templates treat specially: quotes, braces, placeholders, `$`, a backslash.
AWKWARD = 'said "hi" {x} {{topic}} $topic ${x} $$ \\ é 주제'

# Runs inside the peers' environment: renders one export with one set of values (a
# multi-select's list is given as llmtool joins it: the `llm` CLI and Semantic Kernel take text).
RENDER = r'''
import asyncio, json, logging, sys
logging.disable(logging.WARNING)
fmt, path, values = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
as_text = {name: ", ".join(v) if isinstance(v, list) else v for name, v in values.items()}
if fmt == "prompty":
    import prompty
    messages = prompty.prepare(prompty.load(path), values)
    assert len(messages) == 1 and messages[0].role == "user", messages
    text = "".join(part.value for part in messages[0].parts)
elif fmt == "dotprompt":
    from dotpromptz import Dotprompt
    from dotpromptz.typing import DataArgument
    rendered = asyncio.run(Dotprompt().render(open(path, encoding="utf-8").read(), DataArgument(input=values)))
    assert len(rendered.messages) == 1, rendered.messages
    text = "".join(part.text for part in rendered.messages[0].content)
elif fmt == "llm-template":
    from llm.cli import load_template
    template = load_template(path)
    text, system = template.evaluate(as_text.pop("input", ""), as_text)
    assert system is None, system
else:
    from semantic_kernel import Kernel
    from semantic_kernel.contents import ChatHistory
    from semantic_kernel.functions import KernelArguments, KernelFunctionFromPrompt
    from semantic_kernel.prompt_template import KernelPromptTemplate
    function = KernelFunctionFromPrompt.from_directory(path)
    arguments = KernelArguments(**as_text)
    function.update_arguments_with_defaults(arguments)
    if fmt == "semantic-kernel":
        config = function.prompt_template.prompt_template_config
        template = KernelPromptTemplate(prompt_template_config=config, allow_dangerously_set_content=True)
        text = asyncio.run(template.render(Kernel(), arguments))
    else:
        rendered = asyncio.run(function.prompt_template.render(Kernel(), arguments))
        messages = ChatHistory.from_rendered_prompt(rendered).messages
        assert len(messages) == 1 and messages[0].role == "user", messages
        text = messages[0].content
print(json.dumps(text))
'''


def log(message):
    print(f"[peers] {message}", flush=True)


def peers_python():
    return venv_python(WORK, PEERS, PROBE, log)


def llmtool(*args, stdin=None, warnings=None):
    """llmtool's standard output; its standard error goes to `warnings` when given."""
    result = subprocess.run([LLMTOOL, *args], capture_output=True, text=True, input=stdin)
    if result.returncode != 0:
        raise RuntimeError(f"llmtool {' '.join(args)}: {result.stderr}")
    if warnings is not None:
        warnings.append(result.stderr)
    return result.stdout


def export(tool, fmt, work, with_warnings=False):
    """Exports `tool` for the peer into `work`: the path the peer loads, and the names the
    export gives the variables (those it renamed, by its LT702 warnings); and, when asked,
    the export's warnings."""
    warnings = []
    target = fmt.removesuffix("-message")
    llmtool("export", tool, "--to", target, "--out", work, "--name", "exported", warnings=warnings)
    renamed = dict(re.findall(r"variable `(.*?)` is `(.*?)` in this template syntax", warnings[0]))
    extension = {"prompty": ".prompty", "dotprompt": ".prompt", "llm-template": ".yaml"}.get(target, "")
    path = os.path.join(work, "exported" + extension)
    return (path, renamed, warnings[0]) if with_warnings else (path, renamed)


def vars_file(work, values):
    """`values` written as a `--vars` file in `work`: its path."""
    path = os.path.join(work, "vars.json")
    with open(path, "w", encoding="utf-8") as out:
        json.dump(values, out)
    return path


def peer_answer(python, code, fmt, exported, renamed, values, label):
    """What the peer's `code` prints for the export (as JSON), given `values` under the names
    the export gave them; None, said, when the peer fails."""
    peer_values = {renamed.get(name, name): value for name, value in values.items()}
    result = subprocess.run([python, "-c", code, fmt, exported, json.dumps(peer_values)], capture_output=True, text=True)
    if result.returncode != 0:
        log(f"FAIL {label}: the peer failed:\n{result.stderr[-2000:]}")
        return None
    return json.loads(result.stdout)


def sent_messages(tool, vars_file):
    """The messages `llmtool run --dry-run` sends for `tool` to an OpenAI model (the key never
    used), as [[role, text]...]."""
    env = {**os.environ, "OPENAI_API_KEY": "sk-peers-unused", "LLMTOOL_NO_LOG": "1"}
    out = subprocess.run([LLMTOOL, "run", tool, "--vars", vars_file, "--dry-run", "--provider", "openai", "--model", "gpt-4o-mini"],
                         capture_output=True, text=True, env=env, check=True).stdout
    body = json.loads(out.split("\n\n", 1)[1])
    return [[message["role"], message["content"]] for message in body["messages"]]


# A peer's role as llmtool sends it: Dotprompt's `model` is the assistant; a developer message
# goes as a system message.
SENT_ROLES = {"model": "assistant", "developer": "system"}


def trimmed(messages):
    return [[role, text.strip()] for role, text in messages]


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
    build_binaries()
    python = peers_python()
    failures, checks = 0, 0
    with tempfile.TemporaryDirectory() as work:
        for tool in TOOLS:
            names = [name for name, *_ in variables(tool)]
            for fmt in FORMATS:
                exported, renamed = export(tool, fmt, os.path.join(work, fmt))
                for values in value_sets(tool):
                    ours = llmtool("render", tool, "--vars", vars_file(work, values))
                    checks += 1
                    label = f"{os.path.basename(tool)} via {fmt} with {len(values)} of {len(names)} values"
                    theirs = peer_answer(python, RENDER, fmt, exported, renamed, values, label)
                    if theirs is None:
                        failures += 1
                        continue
                    if theirs != ours:
                        failures += 1
                        log(f"FAIL {label}:\n  ours:   {ours!r}\n  theirs: {theirs!r}")
        for tool in CHATS:
            for fmt in CHAT_FORMATS:
                exported, renamed, warnings = export(tool, fmt, os.path.join(work, "chat-" + fmt), with_warnings=True)
                if "LT708" in warnings:
                    log(f"{os.path.basename(tool)} via {fmt}: not compared, the export says the peer reads it otherwise (LT708)")
                    continue
                values = value_sets(tool)[-1]
                ours = sent_messages(tool, vars_file(work, values))
                checks += 1
                label = f"{os.path.basename(tool)} via {fmt}, the messages sent"
                answer = peer_answer(python, MESSAGES, fmt, exported, renamed, values, label)
                if answer is None:
                    failures += 1
                    continue
                theirs = [[SENT_ROLES.get(role, role), text] for role, text in answer]
                if fmt != "semantic-kernel":
                    theirs, ours = trimmed(theirs), trimmed(ours)
                if theirs != ours:
                    failures += 1
                    log(f"FAIL {label}:\n  ours:   {ours!r}\n  theirs: {theirs!r}")
        # Langfuse: every value (it has no defaults), the prompt compiled by its SDK.
        langfuse = venv_python(*LANGFUSE, log)
        for tool in TOOLS:
            warnings = []
            prompt = llmtool("export", tool, "--to", "langfuse", warnings=warnings)
            if "LT708" in warnings[0]:
                log(f"{os.path.basename(tool)} via langfuse: not compared, the export says Langfuse reads it otherwise (LT708)")
                continue
            exported = os.path.join(work, "langfuse.json")
            with open(exported, "w", encoding="utf-8") as out:
                out.write(prompt)
            values = value_sets(tool)[-1]
            ours = llmtool("render", tool, "--vars", vars_file(work, values))
            result = subprocess.run([langfuse, "-c", LANGFUSE_RENDER, exported, json.dumps(values)], capture_output=True, text=True)
            checks += 1
            label = f"{os.path.basename(tool)} via langfuse with every value"
            if result.returncode != 0:
                failures += 1
                log(f"FAIL {label}: the peer failed:\n{result.stderr[-2000:]}")
            elif json.loads(result.stdout) != ours:
                failures += 1
                log(f"FAIL {label}:\n  ours:   {ours!r}\n  theirs: {json.loads(result.stdout)!r}")
    log(f"{checks - failures} of {checks} renderings equal")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
