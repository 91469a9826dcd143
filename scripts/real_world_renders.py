#!/usr/bin/env python3
"""The real-world prompt files (crates/llmtool-convert/tests/fixtures/real-world/: Prompty,
Dotprompt, `llm` templates, Semantic Kernel) rendered by their peer's own code and by llmtool,
on the same values, and compared.

For each file llmtool imports (`llmtool import`), the imported tool is rendered with
`llmtool render`, and the original file with its peer (the packages of scripts/peers.py):
- Prompty: `prompty.load`, then `prompty.prepare`: the messages it would send;
- Dotprompt: `Dotprompt().render`: the messages;
- `llm`: `load_template`, then `Template.evaluate`: the system prompt and the prompt;
- Semantic Kernel: the function from its folder (`from_directory`) or YAML (`from_yaml`), its
  defaults, then its template's `render` (values not HTML-encoded): the text; or, when the
  text holds `<message>` elements, the messages a chat service sends
  (`ChatHistory.from_rendered_prompt`, values HTML-encoded as by default);
- Langfuse (`langfuse`, its Python SDK, in an environment of its own): each prompt of the file
  (the latest version of each, as `llmtool import` takes them) compiled by `TextPromptClient`
  or `ChatPromptClient`: the text, or the messages (placeholders, which llmtool leaves out,
  left out). Langfuse has no defaults, so only the set with every value is rendered.
Each file is rendered twice: with a value for every variable, then with the required ones only
(the others take their defaults). When the peer gives messages, llmtool's text is split at its
role lines (`system:`) and each message is compared with surrounding whitespace trimmed, as
Prompty and Dotprompt trim them, empty messages left out (no peer sends one); one user message
and no role lines compare exactly.

A file whose peer cannot load or render it here (a partial it does not have, a template
language it lacks) is counted, with the peer's reason, but not compared. Exits 1 when a
rendering differs, or when the counts in docs/convert.md (between the `real-world renderings`
markers) are not the ones found; `LLMTOOL_BLESS=1` writes them.
"""
import json, os, re, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
from checks import venv_python, build_binaries  # noqa: E402
from peers import LLMTOOL, ROOT, peers_python  # noqa: E402

# Prompty 1 (the 0.1 series of the `prompty` package) reads the files written for it, which
# Prompty 2 refuses (inputs with `type`, `${env:...}` connections...): a Prompty file that the
# one cannot load is rendered by the other.
PROMPTY_1 = (os.path.join(ROOT, "target", "peers-prompty1"), ["prompty==0.1.50", "typing_extensions==4.16.0"], "import prompty, jinja2")

CORPUS = os.path.join(ROOT, "crates", "llmtool-convert", "tests", "fixtures", "real-world")
DOCS = os.path.join(ROOT, "docs", "convert.md")
BEGIN, END = "<!-- real-world renderings: begin -->", "<!-- real-world renderings: end -->"
# The peer formats, by the corpus folder that holds them.
FAMILIES = ["prompty", "dotprompt", "llm-template", "semantic-kernel", "langfuse"]
# Langfuse's Python SDK, apart: its dependencies are not Semantic Kernel's.
LANGFUSE = (os.path.join(ROOT, "target", "peers-langfuse"), ["langfuse==5.0.4"], "import langfuse.model")
# A line that starts a message, in llmtool's text as in Prompty's: a role name and a colon.
# Prompty also allows a `#` before the role, and attributes after it: `system[name="seth"]:`.
ROLE_LINE = re.compile(r"^\s*#?\s*(system|user|assistant|developer|function|tool|model)\s*(\[[^\]]*\])?\s*:\s*$", re.I)
# A placeholder of a tool's prompt.
PLACEHOLDER = re.compile(r"\{\{\s*([^{}\s]+)\s*\}\}")

# Runs inside the peers' environment: reads a list of jobs (format, path, values) on standard
# input, writes one result per job: {"messages": [[role, text]...]} or {"text": ...}, or
# {"error": why the peer could not render it}.
PEER = r'''
import asyncio, json, logging, os, re, sys, traceback
logging.disable(logging.WARNING)

def text_of(parts, text_key):
    out = []
    for part in parts:
        text = getattr(part, text_key, None)
        out.append(text if isinstance(text, str) else f"<a {type(part).__name__}>")
    return "".join(out)

def prompty_messages(path, values):
    import prompty
    # Connection settings may name environment variables; rendering never uses them.
    for name in re.findall(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)", open(path, encoding="utf-8").read(), re.I):
        os.environ.setdefault(name, "unused")
    messages = prompty.prepare(prompty.load(path), values)
    if any(isinstance(m, dict) for m in messages):
        # Prompty 1: dictionaries, whose content is text or a list of parts.
        def content(c):
            return c if isinstance(c, str) else "".join(p.get("text", f"<a {p.get('type')} part>") for p in c)
        return [[m["role"], content(m["content"])] for m in messages]
    return [[m.role, text_of(m.parts, "value")] for m in messages]

def dotprompt_messages(path, values):
    from dotpromptz import Dotprompt
    from dotpromptz.typing import DataArgument
    rendered = asyncio.run(Dotprompt().render(open(path, encoding="utf-8").read(), DataArgument(input=values)))
    return [[str(getattr(m.role, "value", m.role)), text_of(m.content, "text")] for m in rendered.messages]

def llm_messages(path, values):
    # As `llm -t TEMPLATE INPUT` applies a template: the input goes in its `$input`, or after
    # its prompt when it has none.
    from llm.cli import _apply_template, load_template
    values = dict(values)
    prompt, system = _apply_template(load_template(path), values.pop("input", ""), values, None)
    return [[role, text] for role, text in (("system", system), ("user", prompt)) if text]

def semantic_kernel_text(path, values):
    from semantic_kernel import Kernel
    from semantic_kernel.functions import KernelArguments, KernelFunctionFromPrompt
    if os.path.isdir(path):
        function = KernelFunctionFromPrompt.from_directory(path)
    else:
        function = KernelFunctionFromPrompt.from_yaml(open(path, encoding="utf-8-sig").read())
    arguments = KernelArguments(**values)
    function.update_arguments_with_defaults(arguments)
    template = function.prompt_template
    template.allow_dangerously_set_content = True
    text = asyncio.run(template.render(Kernel(), arguments))
    if "<message" not in text:
        return {"text": text}
    # A chat service reads the rendered prompt's `<message>` elements as the messages it sends
    # (the values HTML-encoded first, as by default).
    from semantic_kernel.contents import ChatHistory
    template.allow_dangerously_set_content = False
    history = ChatHistory.from_rendered_prompt(asyncio.run(template.render(Kernel(), arguments)))
    return {"messages": [[str(m.role.value), m.content or ""] for m in history.messages]}

results = []
for job in json.load(sys.stdin):
    fmt, path, values = job["format"], job["path"], job["values"]
    try:
        if fmt == "semantic-kernel":
            results.append(semantic_kernel_text(path, values))
        else:
            read = {"prompty": prompty_messages, "dotprompt": dotprompt_messages, "llm-template": llm_messages}[fmt]
            results.append({"messages": read(path, values)})
    except Exception as error:
        while isinstance(error, BaseExceptionGroup):  # asyncio's task groups wrap the cause
            error = error.exceptions[0]
        results.append({"error": f"{type(error).__name__}: {error}".splitlines()[0][:300]})
print(json.dumps(results))
'''


# Runs in Langfuse's environment: the same jobs and results as PEER, for Langfuse prompts
# (each job's "prompt" is the prompt object itself).
LANGFUSE_PEER = r'''
import json, logging, sys
logging.disable(logging.WARNING)
from langfuse.api import Prompt_Chat, Prompt_Text
from langfuse.model import ChatPromptClient, TextPromptClient
results = []
for job in json.load(sys.stdin):
    prompt, values = job["prompt"], job["values"]
    fields = {"name": prompt["name"], "version": prompt.get("version") or 1, "config": prompt.get("config") or {},
              "labels": prompt.get("labels") or [], "tags": prompt.get("tags") or []}
    try:
        if prompt.get("type") == "chat" or isinstance(prompt["prompt"], list):
            compiled = ChatPromptClient(Prompt_Chat(prompt=prompt["prompt"], **fields)).compile(**values)
            results.append({"messages": [[m["role"], m["content"]] for m in compiled if "role" in m]})
        else:
            results.append({"text": TextPromptClient(Prompt_Text(prompt=prompt["prompt"], **fields)).compile(**values)})
    except Exception as error:
        results.append({"error": f"{type(error).__name__}: {error}".splitlines()[0][:300]})
print(json.dumps(results))
'''


def log(message):
    print(f"[real-world renders] {message}", flush=True)


def entries(family):
    folder = os.path.join(CORPUS, family)
    return [os.path.join(folder, name) for name in sorted(os.listdir(folder))]


def langfuse_prompts(entry):
    """The prompts `llmtool import` takes from a Langfuse file: the latest version of each."""
    with open(entry, encoding="utf-8") as source:
        found = json.load(source)
    latest = {}
    for prompt in found if isinstance(found, list) else [found]:
        if prompt["name"] not in latest or (prompt.get("version") or 0) >= (latest[prompt["name"]].get("version") or 0):
            latest[prompt["name"]] = prompt
    return list(latest.values())


def imported(entry, name=None):
    """The tool llmtool imports from `entry` (the one named `name`, in a file of several), or
    None when it refuses it (exit 1)."""
    result = subprocess.run([LLMTOOL, "import", entry] + (["--name", name] if name else []), capture_output=True, text=True)
    if result.returncode == 1:
        return None
    if result.returncode != 0:
        raise RuntimeError(f"llmtool import {entry}: {result.stderr}")
    return json.loads(result.stdout)


def value_sets(tool):
    """A value for every variable, then the required ones only (if that is fewer): a text is
    named after its variable, a select takes its first allowed values."""
    every, required = {}, {}
    declared = tool.get("metadata", {}).get("variables")
    # A tool that declares no variables has one required text per placeholder (one that
    # declares some, or an empty list, keeps other placeholders as text).
    placeholders = dict.fromkeys(PLACEHOLDER.findall(tool["model_prompt"]))
    implicit = [] if declared is not None else [{"name": name} for name in placeholders]
    for variable in (declared or []) + implicit:
        name, kind = variable["name"], variable.get("type", "text")
        allowed = variable.get("allowed_values") or []
        if kind == "multi-select":
            value = allowed[:2]
        elif kind == "single-select":
            value = allowed[0] if allowed else ""
        else:
            value = f"«{name}» value"
        every[name] = value
        if variable.get("default", "") == "" and kind != "multi-select":
            required[name] = value
    return [every] + ([required] if len(required) < len(every) else [])


def render(tool, values, work):
    tool_path, vars_path = os.path.join(work, "tool.json"), os.path.join(work, "vars.json")
    # The model parameters play no part in rendering, and a source may have one out of range
    # (which `render` refuses, as `check` does).
    metadata = {key: value for key, value in tool.get("metadata", {}).items() if key != "parameters"}
    with open(tool_path, "w", encoding="utf-8") as out:
        json.dump({**tool, "metadata": metadata}, out)
    with open(vars_path, "w", encoding="utf-8") as out:
        json.dump(values, out)
    result = subprocess.run([LLMTOOL, "render", tool_path, "--vars", vars_path], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"llmtool render of an import failed: {result.stderr}")
    return result.stdout


def as_messages(text):
    """llmtool's rendered text as messages: split at its role lines, each trimmed; text before
    the first role line is a user message."""
    messages, role, lines = [], "user", []
    for line in text.split("\n"):
        found = ROLE_LINE.match(line)
        if found:
            messages.append([role, "\n".join(lines)])
            role, lines = found.group(1).lower(), []
        else:
            lines.append(line)
    messages.append([role, "\n".join(lines)])
    return trimmed(messages)


# What Prompty puts where an input that is not text goes (a thread's or an image's marker, a
# part that is not text): llmtool leaves those inputs out, with a warning at each (LT701), so
# they are left out of the peer's messages before comparing.
MEDIA_MARKER = re.compile(r"__PROMPTY_THREAD_[0-9a-f]+_\w+__")
MEDIA_PART = re.compile(r"<a \w+Part>")


# A chat tool's turn is `assistant:` where Dotprompt's message is the `model`'s.
SAME_ROLE = {"model": "assistant"}


def trimmed(messages):
    """Messages with the whitespace around their text taken off, the empty ones left out (the
    peers send no empty message), Dotprompt's `model` read as `assistant`."""
    return [[SAME_ROLE.get(role.lower(), role.lower()), text.strip()] for role, text in messages if text.strip()]


def without_media(messages):
    return [[role, MEDIA_PART.sub("", MEDIA_MARKER.sub("", text))] for role, text in messages]


def same(ours, theirs):
    if "text" in theirs:
        return ours == theirs["text"]
    peer = theirs["messages"]
    if len(peer) == 1 and peer[0][0] == "user" and not any(ROLE_LINE.match(l) for l in ours.split("\n")):
        return ours == peer[0][1] or ours.strip() == peer[0][1].strip()
    return as_messages(ours) == trimmed(without_media(peer))


def counts_table(rows):
    header = "| format | files | llmtool imports | of those, the peer renders here | equal renderings |\n|---|---|---|---|---|\n"
    lines, totals = [], [0, 0, 0, 0]
    for family in FAMILIES:
        found = [r for r in rows if r["family"] == family]
        imports = [r for r in found if r["llmtool"] == "imports"]
        rendered = [r for r in imports if r["peer"] == "renders"]
        equal = [r for r in rendered if r["equal"]]
        figures = [len(found), len(imports), len(rendered), len(equal)]
        totals = [a + b for a, b in zip(totals, figures)]
        lines.append(f"| {family} | " + " | ".join(map(str, figures)) + " |\n")
    lines.append("| **all** | " + " | ".join(f"**{n}**" for n in totals) + " |\n")
    return header + "".join(lines)


def check_docs(table):
    return checks.doc_table_fresh(DOCS, (BEGIN, END), table, "renderings table", log)


def peer_render(python, jobs, code=PEER):
    result = subprocess.run([python, "-c", code], input=json.dumps(jobs), capture_output=True, text=True)
    if result.returncode != 0:
        log(f"the peers' renderer failed:\n{result.stderr[-3000:]}")
        sys.exit(1)
    return json.loads(result.stdout)


def main():
    build_binaries()
    python = peers_python()
    rows, jobs, langfuse_jobs = [], [], []
    with tempfile.TemporaryDirectory() as work:
        for entry in entries("langfuse"):
            for prompt in langfuse_prompts(entry):
                tool = imported(entry, prompt["name"])
                row = {"family": "langfuse", "entry": f"{os.path.relpath(entry, CORPUS)}#{prompt['name']}", "llmtool": "imports" if tool else "refuses", "ours": [], "jobs": []}
                # Langfuse has no defaults: an application gives every value.
                for values in value_sets(tool)[:1] if tool else []:
                    row["ours"].append(render(tool, values, work))
                    row["jobs"].append(("langfuse", len(langfuse_jobs)))
                    langfuse_jobs.append({"prompt": prompt, "values": values})
                rows.append(row)
        for family in FAMILIES[:-1]:
            for entry in entries(family):
                tool = imported(entry)
                row = {"family": family, "entry": os.path.relpath(entry, CORPUS), "llmtool": "imports" if tool else "refuses", "ours": [], "jobs": []}
                for values in value_sets(tool) if tool else []:
                    row["ours"].append(render(tool, values, work))
                    row["jobs"].append(("peers", len(jobs)))
                    jobs.append({"format": family, "path": entry, "values": values})
                rows.append(row)
    answers = peer_render(python, jobs)
    langfuse_answers = peer_render(venv_python(*LANGFUSE, log), langfuse_jobs, LANGFUSE_PEER)
    # The Prompty files that Prompty 2 cannot load, tried with Prompty 1.
    again = [i for i, job in enumerate(jobs) if job["format"] == "prompty" and "error" in answers[i]]
    if again:
        retried = peer_render(venv_python(*PROMPTY_1, log), [jobs[i] for i in again])
        for i, answer in zip(again, retried):
            if "error" not in answer:
                answers[i] = answer
            else:
                answers[i]["error"] += f"; Prompty 1: {answer['error']}"
    differing = 0
    for row in rows:
        theirs = [(answers if kind == "peers" else langfuse_answers)[i] for kind, i in row["jobs"]]
        errors = [t["error"] for t in theirs if "error" in t]
        row["peer"] = "cannot render" if errors else "renders"
        row["equal"] = bool(theirs) and not errors and all(same(o, t) for o, t in zip(row["ours"], theirs))
        if row["llmtool"] == "refuses":
            log(f"{row['entry']}: llmtool refuses it (its snapshot says where and why)")
        elif errors:
            log(f"{row['entry']}: the peer cannot render it here: {errors[0]}")
        elif row["equal"]:
            log(f"{row['entry']}: equal")
        else:
            differing += 1
            for ours, their in zip(row["ours"], theirs):
                if not same(ours, their):
                    log(f"DIFFERS {row['entry']}:\n  ours:   {ours!r}\n  theirs: {their!r}")
                    break
    table = counts_table(rows)
    print(table, end="")
    fresh = check_docs(table)
    sys.exit(1 if differing or not fresh else 0)


if __name__ == "__main__":
    main()
