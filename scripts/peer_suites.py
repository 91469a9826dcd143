#!/usr/bin/env python3
"""The peers' own spec suites run through llmtool, and through the peer, case by case.

The suites (fixtures/, except the last, which ships in the installed `prompty` package):
- Dotprompt's `spec/**/*.yaml` (google/dotprompt): a template, its data, the messages expected;
- Prompty's conformance vectors of the stages `render` (a template, its engine and inputs, the
  rendered text expected) and `parse` (a rendered text, the messages expected);
- Prompty's Jinja Subset corpus (`prompty/jinja_subset/conformance/`: `corpus.json` and
  `render_golden.json`): a template and inputs, the rendered text (or error) expected;
- Prompty's runtime test fixtures (the `.prompty` files of its Python, TypeScript and C#
  runtimes' tests, with the files they name beside them), which say nothing of what they
  render: the peer's rendering, on each input's default (else its example, else a made-up
  text), is the expected output. Prompty's Python runtime renders and parses them
  (`prompty.prepare`); those in Nunjucks, which only its TypeScript runtime reads, are rendered
  with the `nunjucks` npm package set up as that runtime sets it up, then parsed by the Python
  runtime's parser;
- the render cases of the `llm` CLI's tests/test_templates.py, transcribed in llm/cases.json: a
  template, input and parameters, the prompt and system prompt (or error) expected.

Each case is written as one source file of its format (a `.prompt`, a `.prompty` whose front
matter declares the case's inputs and names its engine, an `llm` template; the runtime
fixtures are imported where they are), imported with
`llmtool import`, and rendered with `llmtool render --vars` on the case's values (those of the
tool's variables). What a source file cannot say (partials, `@` context, history messages,
schemas, Prompty's thread inputs) is listed with the case. The text is compared with the
expected output as messages: split at its role lines (what comes before the first is the user
message), against the expected messages; Prompty's expected text is split as Prompty's parser
does (what comes before the first role line is the system message, newlines around a message
trimmed); Dotprompt's and llm's are compared as scripts/real_world_renders.py compares them.
Only the messages are compared (not Dotprompt's metadata nor Prompty's role attributes).
A part that is not text (Dotprompt's media and section parts) is written `<part {...}>`.

Each case is also rendered by its peer, from the same source and values (Dotprompt with the
suite's partials, context, history and options, as its spec runner does; Prompty with its
`Jinja2Renderer` or `MustacheRenderer`, and its parser for the parse vectors; llm with
`Template.evaluate`, or as `llm -t` applies it), and the report says whether the peer agrees
with the suite's expected output.

A case whose text is equal is also judged on what `llmtool run --dry-run` sends (the request's
messages, to an OpenAI model): the peer's messages (Prompty's `prepare` or parser, dotpromptz's
rendered messages, `llm`'s system prompt and prompt), compared as the text is, with the peer's
`model` role read as `assistant` and `developer` as `system` (llmtool sends a developer turn as
a system message), llmtool's instruction for the expected output taken off the last user
message (the peers' runtimes constrain the answer their own way), and an image tool's one text
compared with the texts of the peer's messages (an image API has no roles). A case equal on its text that sends other messages must be explained in
docs/convert.md as `sent-different`.

Every case is classified:
- equal: llmtool's render is the expected output (or the suite expects an error and
  `llmtool render` refuses the values);
- different: llmtool renders something else (or renders where an error is expected);
- refused-located: `llmtool import` or `llmtool render` exits 1 with an error that gives a
  line:column and quotes the source;
- refused-unlocated: exits 1 with no such error;
- crash: any other exit status, or a panic.

Writes a JSON report (one row per case; REPORT, by default target/peer-suites.json) and prints
the counts per suite and class. Exits 1 when a case is `different`, `refused-unlocated` or a
`crash` and docs/convert.md does not explain it (its list "Cases explained"), when the list
explains a case that no longer needs it, or when the counts table there is stale
(LLMTOOL_BLESS=1 writes it). LLMTOOL names the binary (default: checks.LLMTOOL);
LLMTOOL_PEERS_DIR the peers' environment, as for scripts/peers.py.

Usage: peer_suites.py [REPORT]
"""
import functools, glob, json, os, re, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
from peers import ROOT, peers_python  # noqa: E402
from real_world_renders import PLACEHOLDER, same, trimmed, without_media  # noqa: E402

LLMTOOL = os.environ.get("LLMTOOL", checks.LLMTOOL)
FIXTURES = os.path.join(ROOT, "crates", "llmtool-convert", "tests", "fixtures", "peer-suites")
CLASSES = ["equal", "different", "refused-located", "refused-at-render", "refused-unlocated", "crash"]
# The classes a case may have only with its reason written in docs/convert.md.
TO_EXPLAIN = {"different", "refused-at-render", "refused-unlocated", "crash"}
DOCS = os.path.join(ROOT, "docs", "convert.md")
COUNTS = ("<!-- peer suites counts: begin -->", "<!-- peer suites counts: end -->")
EXPLAINED = ("<!-- peer suites explained: begin -->", "<!-- peer suites explained: end -->")
# An explained case in docs/convert.md: "- `SUITE: CASE` (CLASS): the reason".
EXPLAINED_LINE = re.compile(r"^- `([^`:]+): ([^`]+)` \(([a-z-]+)\): \S", re.M)
# A line that starts a message in Prompty's parser: one of its roles, maybe attributes, a colon.
PROMPTY_ROLE_LINE = re.compile(r"^\s*#?\s*(system|user|assistant|developer)(\[[^\]]*\])?\s*:\s*$", re.I)
# Where an llmtool diagnostic points, and a source line it quotes.
LOCATION = re.compile(r"^\s*--> .+:\d+:\d+$", re.M)
QUOTED_LINE = re.compile(r"^\s*\d+ \|", re.M)

# Runs inside the peers' environment: reads a list of jobs on standard input, writes one
# result per job: {"messages": ...}, {"text": ...}, {"prompt", "system"}, {"error": ...} or
# {"unavailable": why}.
PEER = r'''
import asyncio, json, logging, sys
logging.disable(logging.WARNING)

def dotprompt(job):
    from dotpromptz import DataArgument, Dotprompt, PromptMetadata
    resolved = job["resolver_partials"]
    renderer = Dotprompt(schemas=job["schemas"], partial_resolver=resolved.get if resolved else None)
    for name, source in job["partials"].items():
        renderer.define_partial(name, source)
    options = PromptMetadata.model_validate(job["options"]) if job["options"] else None
    rendered = asyncio.run(renderer.render(job["template"], DataArgument.model_validate(job["data"]), options))
    return {"messages": [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in rendered.messages]}

def prompty_render(job):
    import prompty
    from prompty.renderers import Jinja2Renderer, MustacheRenderer
    if job["engine"] == "mustache":
        try:
            import chevron  # noqa: F401
        except ImportError:
            return {"unavailable": "chevron, which Prompty's Mustache renderer needs, is not installed"}
    agent = prompty.load(job["path"])
    renderer = {"jinja2": Jinja2Renderer, "mustache": MustacheRenderer}[job["engine"]]()
    return {"text": renderer.render(agent, agent.instructions, job["inputs"])}

def prompty_parse(job):
    import prompty
    from prompty.parsers import PromptyChatParser
    agent = prompty.load(job["path"])
    messages = PromptyChatParser().parse(agent, agent.instructions)
    return {"messages": [[m.role, "".join(part.value for part in m.parts)] for m in messages]}

def prompty_load(job):
    """What a runtime fixture declares: its engine, its body, and a value for each input."""
    import prompty
    agent = prompty.load(job["path"])
    values = {}
    for prop in agent.inputs or []:
        value = prop.default if prop.default is not None else prop.example
        if value is None:
            value = [] if prop.kind == "thread" else f"<{prop.name}>"
        values[prop.name] = value
    template = agent.template
    engine = template.format.kind if template and template.format else "jinja2"  # Prompty's default
    return {"engine": engine, "body": agent.instructions, "values": values}

def prompty_prepare(job):
    """A runtime fixture's messages: prepared by Prompty, or, for a body rendered elsewhere
    (Nunjucks), parsed by Prompty's parser."""
    import prompty
    from prompty.parsers import PromptyChatParser
    agent = prompty.load(job["path"])
    if "rendered" in job:
        messages = PromptyChatParser().parse(agent, job["rendered"])
    else:
        messages = prompty.prepare(agent, job["inputs"])
    text = lambda part: part.value if hasattr(part, "value") else f"<part {type(part).__name__}>"
    return {"messages": [[m.role, "".join(text(part) for part in m.parts)] for m in messages]}

def llm(job):
    import click
    from llm import Template
    from llm.cli import _apply_template, load_template
    template, params = load_template(job["path"]), dict(job["params"])
    try:
        if job["via"] == "Template.evaluate":
            prompt, system = template.evaluate(job["input"], params)
        else:
            prompt, system = _apply_template(template, job["input"], params, None)
    except Template.MissingVariables as error:
        return {"error": error.args[0]}
    except click.ClickException as error:
        return {"error": f"Error: {error.message}"}
    return {"prompt": prompt, "system": system}

run = {"dotprompt": dotprompt, "prompty-render": prompty_render, "prompty-parse": prompty_parse,
       "prompty-load": prompty_load, "prompty-prepare": prompty_prepare, "llm": llm}
results = []
for job in json.load(sys.stdin):
    try:
        results.append(run[job["kind"]](job))
    except Exception as error:
        while isinstance(error, BaseExceptionGroup):  # asyncio's task groups wrap the cause
            error = error.exceptions[0]
        results.append({"error": f"{type(error).__name__}: {error}".splitlines()[0][:300]})
print(json.dumps(results))
'''

# Runs inside the peers' environment: the YAML files named on the command line, as JSON.
READ_YAML = r'''
import json, sys, yaml
print(json.dumps({path: yaml.safe_load(open(path, encoding="utf-8")) for path in sys.argv[1:]}))
'''


def log(message):
    print(f"[peer suites] {message}", flush=True)


def in_peers(python, script, *args, stdin=None):
    # The runtime fixtures' connections name environment variables (`${env:AZURE_OPENAI_API_KEY}`)
    # that Prompty reads when it loads a file; they play no part in rendering.
    env = {**os.environ, **{name: "set-by-the-peer-suites" for name in runtime_environment()}}
    result = subprocess.run([python, "-c", script, *args], input=stdin, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        log(f"the peers' environment failed:\n{result.stderr[-3000:]}")
        sys.exit(1)
    return json.loads(result.stdout)


# --- the suites: each case as a source file, values, the expected output and the peer's job ---


def case(suite, file, case_id, source, values, expected, peer, not_in_source=()):
    """`source` is (format, file extension, text); `expected` is {"messages": [[role, text]...]},
    {"text": ...}, {"pattern": regex} or {"error": ...}."""
    return {"suite": suite, "file": file, "case": case_id, "source": source, "values": values,
            "expected": expected, "peer": peer, "not_in_source": list(not_in_source)}


def part_text(part):
    """A Dotprompt part as text: its text, or a marker for a part that is not text."""
    return part["text"] if "text" in part else f"<part {json.dumps(part, sort_keys=True)}>"


def dotprompt_messages(messages):
    return [[m["role"], "".join(part_text(p) for p in m["content"])] for m in messages]


def dotprompt_cases(python):
    folder = os.path.join(FIXTURES, "dotprompt")
    paths = sorted(glob.glob(os.path.join(folder, "spec", "**", "*.yaml"), recursive=True))
    out = []
    for path, suites in in_peers(python, READ_YAML, *paths).items():
        file = os.path.relpath(path, folder)
        for suite in suites:
            for test in suite["tests"]:
                # As Dotprompt's spec runners merge them: the suite's input, else the test's.
                suite_data, test_data = suite.get("data") or {}, test.get("data") or {}
                data = {
                    "input": suite_data.get("input") or test_data.get("input"),
                    "context": {**suite_data.get("context", {}), **test_data.get("context", {})},
                    "messages": suite_data.get("messages", []) + test_data.get("messages", []),
                }
                options = test.get("options")
                text = suite["template"]
                if options:
                    # Options given to `render` are front matter in a file.
                    assert not text.startswith("---"), "options for a template with front matter"
                    text = "---\n" + "".join(f"{key}: {json.dumps(value)}\n" for key, value in options.items()) + "---\n" + text
                lost = [what for what, there in [
                    ("partials", suite.get("partials") or suite.get("resolverPartials")),
                    ("context (@ variables)", data["context"]),
                    ("history messages", data["messages"]),
                    ("schemas", suite.get("schemas")),
                ] if there]
                peer = {"kind": "dotprompt", "template": suite["template"], "data": data, "options": options,
                        "partials": suite.get("partials") or {}, "resolver_partials": suite.get("resolverPartials") or {},
                        "schemas": suite.get("schemas")}
                expected = {"messages": dotprompt_messages(test["expect"]["messages"])}
                out.append(case("dotprompt", file, f"{file}#{suite['name']}/{test['desc']}", ("dotprompt", ".prompt", text),
                                data["input"] or {}, expected, peer, lost))
    return out


def prompty_kind(value):
    """The kind of a Prompty input that takes `value`."""
    if isinstance(value, dict):
        return "thread" if value.get("_kind") == "thread" else "object"
    kinds = {bool: "boolean", int: "integer", float: "float", list: "array"}
    return kinds.get(type(value), "string")


def prompty_source(name, template, engine, inputs, strict=False):
    """A Prompty 2 file: its inputs declared from their values, its engine named."""
    front = [f"name: {json.dumps(name)}"]
    if inputs:
        front.append("inputs:")
        for input_name, value in inputs.items():
            front += [f"  - name: {json.dumps(input_name)}", f"    kind: {prompty_kind(value)}"]
            if isinstance(value, list):
                front += ["    items:", f"      kind: {prompty_kind(value[0]) if value else 'string'}"]
    front += ["template:", "  format:", f"    kind: {engine}"]
    if strict:
        front.append("    strict: true")
    front += ["  parser:", "    kind: prompty"]
    return ("prompty", ".prompty", "---\n" + "\n".join(front) + "\n---\n" + template)


def prompty_vector_cases():
    out = []
    with open(os.path.join(FIXTURES, "prompty", "vectors.json"), encoding="utf-8") as vectors:
        for entry in json.load(vectors):
            vector = entry["vector"]
            given, expected = vector["input"], vector["expected"]
            case_id = f"{vector['stage']}/{vector['name']}"
            if vector["stage"] == "render":
                inputs = given["inputs"]
                source = prompty_source(vector["name"], given["template"], given["engine"], inputs)
                lost = [f"thread input `{n}`" for n, v in inputs.items() if prompty_kind(v) == "thread"]
                want = {"pattern": expected["nonce_pattern"]} if "nonce_pattern" in expected else {"text": expected["rendered"]}
                peer = {"kind": "prompty-render", "engine": given["engine"], "inputs": inputs}
            else:
                inputs = {}
                source = prompty_source(vector["name"], given["rendered"], "jinja2", inputs)
                lost = ["thread inputs"] if "thread_inputs" in given else []
                want = {"messages": [[m["role"], "".join(p["value"] for p in m["content"])] for m in expected["messages"]]}
                peer = {"kind": "prompty-parse"}
            out.append(case("prompty-vectors", "prompty/vectors.json", case_id, source, inputs, want, peer, lost))
    return out


def jinja_corpus_cases(python):
    folder = in_peers(python, "import json, os, prompty.jinja_subset.conformance as c; print(json.dumps(os.path.dirname(c.__file__)))")
    with open(os.path.join(folder, "corpus.json"), encoding="utf-8") as corpus:
        categories = {item["name"]: item["category"] for item in json.load(corpus)["cases"]}
    with open(os.path.join(folder, "render_golden.json"), encoding="utf-8") as goldens:
        out = []
        for golden in json.load(goldens):
            inputs, strict = golden["inputs"], bool(golden.get("strict_props"))
            source = prompty_source(golden["name"], golden["template"], "jinja2", inputs, strict)
            want = {"error": golden["throws"]} if "throws" in golden else {"text": golden["rendered"]}
            peer = {"kind": "prompty-render", "engine": "jinja2", "inputs": inputs}
            lost = [f"strict inputs {golden['strict_props']} (the file says `strict: true`)"] if strict else []
            case_id = f"{categories[golden['name']]}/{golden['name']}"
            out.append(case("prompty-jinja-corpus", "prompty/jinja_subset/conformance/render_golden.json", case_id,
                            source, inputs, want, peer, lost))
    return out


RUNTIME = os.path.join(FIXTURES, "prompty-runtime")
NUNJUCKS = "nunjucks@3.2.4"
# Renders Nunjucks bodies as Prompty's TypeScript runtime does (its `renderers/nunjucks.ts`: an
# environment with no autoescape, an undefined value rendered as nothing): reads
# [{"body", "values"}...] on standard input, writes the rendered texts.
RENDER_NUNJUCKS = r'''
const nunjucks = require(process.argv[1]);
const env = new nunjucks.Environment(null, { autoescape: false, throwOnUndefined: false });
const jobs = JSON.parse(require("fs").readFileSync(0, "utf8"));
console.log(JSON.stringify(jobs.map((job) => {
  try { return { text: env.renderString(job.body, job.values) }; }
  catch (error) { return { error: String(error.message).split("\n")[0] }; }
})));
'''


@functools.cache
def runtime_environment():
    """The environment variables the runtime fixtures name with no default."""
    names = set()
    for path in glob.glob(os.path.join(RUNTIME, "**", "*.prompty"), recursive=True):
        with open(path, encoding="utf-8") as source:
            names.update(re.findall(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}", source.read()))
    return sorted(names)


def nunjucks_module():
    """The `nunjucks` npm package, installed once under target/."""
    folder = os.path.join(ROOT, "target", "peer-suites-npm")
    module = os.path.join(folder, "node_modules", "nunjucks")
    if not os.path.exists(os.path.join(module, "package.json")):
        log(f"installing {NUNJUCKS} (once)")
        os.makedirs(folder, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", folder, "--no-audit", "--no-fund", "--loglevel=error", NUNJUCKS], check=True)
    return module


def render_nunjucks(jobs):
    result = subprocess.run(["node", "-e", RENDER_NUNJUCKS, nunjucks_module()], input=json.dumps(jobs),
                            capture_output=True, text=True)
    if result.returncode != 0:
        log(f"nunjucks failed:\n{result.stderr[-3000:]}")
        sys.exit(1)
    return json.loads(result.stdout)


def prompty_runtime_cases(python):
    paths = sorted(glob.glob(os.path.join(RUNTIME, "**", "*.prompty"), recursive=True))
    loaded = in_peers(python, PEER, stdin=json.dumps([{"kind": "prompty-load", "path": path} for path in paths]))
    nunjucks = [item for item in loaded if item.get("engine") == "nunjucks"]
    rendered = iter(render_nunjucks([{"body": item["body"], "values": item["values"]} for item in nunjucks]))
    out = []
    for path, item in zip(paths, loaded):
        name = os.path.relpath(path, RUNTIME)
        values = item.get("values", {})
        peer = {"kind": "prompty-prepare", "inputs": values}
        if item.get("engine") == "nunjucks":
            text = next(rendered)
            peer = text if "error" in text else {**peer, "rendered": text["text"]}
        elif "error" in item:
            peer = item  # the peer cannot load the file: the case has no expected output
        with open(path, encoding="utf-8") as source:
            out.append(case("prompty-runtime", f"prompty-runtime/{name}", name, ("prompty", None, source.read()),
                            values, {"from_peer": True}, peer))
        out[-1]["path"] = path
    return out


def llm_cases():
    with open(os.path.join(FIXTURES, "llm", "cases.json"), encoding="utf-8") as cases:
        out = []
        for item in json.load(cases)["cases"]:
            if item["expected_error"]:
                want = {"error": item["expected_error"]}
            else:
                messages = [["system", item["expected_system"]], ["user", item["expected_prompt"]]]
                want = {"messages": [[role, text] for role, text in messages if text]}
            peer = {"kind": "llm", "via": item["via"], "input": item["input"], "params": item["params"]}
            values = {"input": item["input"], **item["params"]}
            out.append(case("llm", "llm/cases.json", item["id"], ("llm-template", ".yaml", item["template"]), values, want, peer))
    return out


# --- llmtool ---


def llmtool(*args):
    """(exit status, standard output, standard error)."""
    result = subprocess.run([LLMTOOL, *args], capture_output=True, text=True)
    return result.returncode, result.stdout, result.stderr


def tool_variables(tool):
    """The names a tool takes values for: its variables, or its placeholders when it declares none."""
    metadata = tool.get("metadata", {})
    if "variables" in metadata:
        return [v["name"] for v in metadata["variables"]]
    return list(dict.fromkeys(PLACEHOLDER.findall(tool["model_prompt"])))


MISSING = object()


def value_at(values, name):
    """The value of the variable `name` in the case's values: by its name, or, for a variable
    that stands for a path into an object (`user.name`), by that path."""
    if name in values:
        return values[name]
    value = values
    for key in name.split("."):
        if not isinstance(value, dict) or key not in value:
            return MISSING
        value = value[key]
    return value


def import_and_render(path, fmt, values, work):
    """llmtool's steps on one source file: [(step, exit status, standard error)...], the
    rendered text and the messages `run --dry-run` sends (None when a step failed)."""
    status, out, err = llmtool("import", path, "--from", fmt)
    steps = [("import", status, err)]
    if status != 0:
        return steps, None, None
    tool = json.loads(out)
    # The model parameters play no part in rendering, and a source may have one out of range;
    # the import's time would make the report differ from run to run.
    metadata = tool.get("metadata", {})
    tool["metadata"] = {k: v for k, v in metadata.items() if k not in ("parameters", "timestamp")}
    tool_path, vars_path = os.path.join(work, "tool.json"), os.path.join(work, "vars.json")
    with open(tool_path, "w", encoding="utf-8") as out_file:
        json.dump(tool, out_file, indent=2, ensure_ascii=False)
    with open(vars_path, "w", encoding="utf-8") as out_file:
        given = {name: value_at(values, name) for name in tool_variables(tool)}
        json.dump({name: value for name, value in given.items() if value is not MISSING}, out_file)
    status, out, err = llmtool("render", tool_path, "--vars", vars_path)
    steps.append(("render", status, err))
    if status != 0:
        return steps, None, None
    return steps, out, sent_messages(tool_path, vars_path)


# The request `run --dry-run` prints goes to an OpenAI model with a key that is never used.
SENT_ARGS = ["--dry-run", "--provider", "openai", "--model", "gpt-4o-mini"]


def sent_messages(tool_path, vars_path):
    """The messages `llmtool run --dry-run` would send for the tool, as [[role, text]...] (None
    when the run refuses)."""
    env = {**os.environ, "OPENAI_API_KEY": "sk-peer-suites-unused", "LLMTOOL_NO_LOG": "1"}
    result = subprocess.run([LLMTOOL, "run", tool_path, "--vars", vars_path, *SENT_ARGS],
                            capture_output=True, text=True, env=env)
    if result.returncode != 0 or "\n\n" not in result.stdout:
        return None
    body = json.loads(result.stdout.split("\n\n", 1)[1])
    if "prompt" in body:
        # An image tool's request: one text, with no role.
        return [["image", body["prompt"]]]
    return [[message["role"], message["content"]] for message in body["messages"]]


def errors_of(stderr):
    """The error diagnostics of llmtool's standard error (its warnings and hints left out)."""
    blocks = re.split(r"\n(?=(?:error|warning|hint)\b)", stderr)
    return [block for block in blocks if block.startswith("error")]


def is_located(stderr):
    return any(LOCATION.search(block) and QUOTED_LINE.search(block) for block in errors_of(stderr))


# --- comparing ---


def split_messages(text, first_role):
    """A text as messages, as Prompty's parser splits it: at its role lines, each message's
    newlines at both ends trimmed (a role line with nothing after it is an empty message); text
    before the first role line has `first_role`."""
    messages, role, lines, named = [], first_role, [], False
    for line in text.splitlines():
        found = PROMPTY_ROLE_LINE.match(line.strip())
        if found:
            if lines or named:
                messages.append([role, "\n".join(lines).strip("\n")])
            role, lines, named = found.group(1).lower(), [], True
        else:
            lines.append(line)
    # A role line with nothing after it is an empty message of that role.
    if lines or named:
        messages.append([role, "\n".join(lines).strip("\n")])
    return messages


def matches(suite, ours, expected):
    """Whether llmtool's rendered text is the expected output."""
    if "pattern" in expected:
        return re.match(expected["pattern"], ours) is not None
    if suite.startswith("prompty"):
        theirs = expected["messages"] if "messages" in expected else split_messages(expected["text"], "system")
        return split_messages(ours, "user") == theirs
    return same(ours, expected)


# The roles llmtool sends for the peers' own: Dotprompt's `model` is the assistant, and a
# developer message is sent as a system message (docs/format.md, "Chat prompts").
SENT_ROLES = {"model": "assistant", "developer": "system"}


# What llmtool adds to the last user message for the tool's expected output: the peers' runtimes
# constrain the answer their own way (Genkit's and Prompty's structured output add their own
# instructions or API options), so it is taken off before comparing.
OUTPUT_INSTRUCTION = re.compile(r"(\n\n)?(Answer with JSON only\.|Answer with exactly one of: .*\.)$", re.S)


def without_instruction(sent):
    last = max((i for i, (role, _) in enumerate(sent) if role == "user"), default=None)
    if last is None:
        return sent
    text, removed = OUTPUT_INSTRUCTION.subn("", sent[last][1])
    kept = [list(message) for message in sent]
    kept[last][1] = text
    # A message that held only the instruction is one llmtool added.
    return [message for i, message in enumerate(kept) if i != last or text or not removed]


def sent_matches(suite, sent, expected):
    """Whether the messages llmtool sends are the expected messages, compared as the rendered
    text is (Prompty's trimmed of newlines, the others of whitespace, empty ones left out);
    None where there are no messages to compare (an error, a pattern). An image API takes one
    text and no roles: an image tool's prompt is compared with the texts of the messages."""
    if "error" in expected or "pattern" in expected:
        return None
    if sent is None:
        return False
    if sent and sent[0][0] == "image":
        theirs = expected.get("messages") or [["user", expected.get("text", "")]]
        return sent[0][1].strip() == "\n\n".join(text.strip() for _, text in theirs if text.strip())
    sent = without_instruction(sent)
    if suite.startswith("prompty"):
        theirs = expected["messages"] if "messages" in expected else split_messages(expected["text"], "system")
        theirs = [[SENT_ROLES.get(role, role), text] for role, text in theirs]
        return [[role, text.strip("\n")] for role, text in sent] == theirs
    if "text" in expected:
        return sent == [["user", expected["text"]]]
    theirs = [[SENT_ROLES.get(role.lower(), role.lower()), text] for role, text in expected["messages"]]
    return trimmed(sent) == trimmed(without_media(theirs))


def peer_agrees(answer, expected):
    if "unavailable" in answer:
        return "unavailable"
    if "error" in expected or "error" in answer:
        return answer.get("error") == expected.get("error")
    if "pattern" in expected:
        return re.match(expected["pattern"], answer["text"]) is not None
    if "text" in expected:
        return answer.get("text") == expected["text"]
    if "prompt" in answer:
        theirs = [[role, text] for role, text in [["system", answer["system"]], ["user", answer["prompt"]]] if text]
    elif answer["messages"] and isinstance(answer["messages"][0], dict):
        theirs = dotprompt_messages(answer["messages"])
    else:
        theirs = answer["messages"]
    return theirs == expected["messages"]


def classify(steps, ours, expected, suite):
    """The class of a case, and the step that decided it."""
    for step, status, err in steps:
        if status not in (0, 1) or "panicked" in err:
            return "crash", step
        if status == 1:
            if step == "render" and "error" in expected:
                return "equal", step
            if step == "render":
                # The source renders, the tool refuses the same values: not a fair refusal.
                return "refused-at-render", step
            return ("refused-located" if is_located(err) else "refused-unlocated"), step
    if "error" in expected:
        return "different", "render"
    return ("equal" if matches(suite, ours, expected) else "different"), "render"


# --- the report ---


def counts_table(rows):
    suites = list(dict.fromkeys(row["suite"] for row in rows))
    lines = ["| suite | cases | " + " | ".join(CLASSES) + " | equal, and sent equal | peer agrees |",
             "|---" * (len(CLASSES) + 4) + "|"]
    for suite in suites + ["all"]:
        found = [r for r in rows if suite in (r["suite"], "all")]
        counts = [sum(r["class"] == c for r in found) for c in CLASSES]
        agrees = sum(r["peer_agrees"] is True for r in found)
        unavailable = sum(r["peer_agrees"] == "unavailable" for r in found)
        peer = f"{agrees}" + (f" ({unavailable} unavailable)" if unavailable else "")
        sent = sum(r["class"] == "equal" and r["sent_equal"] is not False for r in found)
        lines.append(f"| {suite} | {len(found)} | " + " | ".join(map(str, counts)) + f" | {sent} | {peer} |")
    return "\n".join(lines) + "\n"


def explained_cases(docs):
    """The cases docs/convert.md explains, with the class each is explained as:
    {(suite, case, class)}."""
    section, _, _ = checks.between(docs, EXPLAINED)
    return set(EXPLAINED_LINE.findall(section))


def judged(rows, docs):
    """The problems with the explanations: cases to explain that are not, and explanations of
    cases that need none."""
    explained = explained_cases(docs)
    need = {(r["suite"], r["case"], r["class"]) for r in rows if r["class"] in TO_EXPLAIN}
    # A case rendered as expected whose run sends other messages is explained as `sent-different`.
    need |= {(r["suite"], r["case"], "sent-different") for r in rows if r.get("sent_equal") is False}
    unexplained = [f"{suite}: {case} ({kind})" for suite, case, kind in sorted(need - explained)]
    stale = [f"{suite}: {case} ({kind})" for suite, case, kind in sorted(explained - need)]
    return unexplained, stale


def main():
    report = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "peer-suites.json")
    if "LLMTOOL" not in os.environ:
        checks.build_binaries()
    python = peers_python()
    cases = (dotprompt_cases(python) + prompty_vector_cases() + jinja_corpus_cases(python)
             + prompty_runtime_cases(python) + llm_cases())
    rows = []
    with tempfile.TemporaryDirectory() as work:
        paths = []
        for number, item in enumerate(cases):
            fmt, extension, text = item["source"]
            if "path" in item:
                paths.append(item["path"])
                continue
            name = re.sub(r"[^A-Za-z0-9_.-]+", "_", item["case"])[:60]
            paths.append(os.path.join(work, f"{number:03d}-{name}{extension}"))
            with open(paths[-1], "w", encoding="utf-8", newline="") as source:
                source.write(text)
        # The peer first: for the runtime fixtures, its rendering is the expected output.
        jobs = [{**item["peer"], "path": path} for item, path in zip(cases, paths) if "kind" in item["peer"]]
        answers = iter(in_peers(python, PEER, stdin=json.dumps(jobs)))
        for item, path in zip(cases, paths):
            answer = next(answers) if "kind" in item["peer"] else item["peer"]
            expected = item["expected"]
            if expected.get("from_peer"):
                expected = {"messages": answer["messages"]} if "messages" in answer else {"error": answer["error"]}
            fmt, _, text = item["source"]
            steps, ours, sent = import_and_render(path, fmt, item["values"], work)
            verdict, step = classify(steps, ours, expected, item["suite"])
            # A case rendered as expected is also judged on the messages its run sends.
            sent_equal = sent_matches(item["suite"], sent, expected) if verdict == "equal" else None
            stderr = "".join(err for _, _, err in steps).replace(work + os.sep, "").replace(ROOT + os.sep, "")
            rows.append({
                "suite": item["suite"], "file": item["file"], "case": item["case"], "class": verdict,
                "step": step, "stderr": stderr[:2000], "source": text, "not_in_source": item["not_in_source"],
                "expected": expected, "got": ours, "sent": sent, "sent_equal": sent_equal, "peer": answer,
                # The runtime fixtures' expected output is the peer's own rendering.
                "peer_agrees": True if item["expected"].get("from_peer") else peer_agrees(answer, expected),
            })
    with open(report, "w", encoding="utf-8") as out:
        json.dump(rows, out, indent=1, ensure_ascii=False)
        out.write("\n")
    log(f"{len(rows)} cases; the report is {report}")
    table = counts_table(rows)
    print(table, end="")
    with open(DOCS, encoding="utf-8") as docs_file:
        docs = docs_file.read()
    unexplained, stale = judged(rows, docs)
    for case_name in unexplained:
        log(f"not explained in docs/convert.md: {case_name}")
    for case_name in stale:
        log(f"explained in docs/convert.md but no longer needs it: {case_name}")
    fresh = checks.doc_table_fresh(DOCS, COUNTS, table, "counts table", log)
    if not fresh or unexplained or stale:
        sys.exit(1)


if __name__ == "__main__":
    main()
