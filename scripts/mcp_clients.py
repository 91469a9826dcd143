#!/usr/bin/env python3
"""`llmtool mcp` checked by real MCP clients, installed from the registries:
- the official MCP Python SDK (`mcp`): over stdio and over Streamable HTTP, each in the
  `initialize` protocol (legacy) and the stateless 2026-07-28 one, a client lists, gets,
  completes and calls, waits for a list change after a tool file is added, and asserts on
  what comes back;
- the same Python client on `llmtool serve`'s `/mcp`, with two servers on one PostgreSQL
  database: a tool published through one server is announced (`tools/list_changed`) and
  listed by the other (needs LLMTOOL_TEST_POSTGRES, as the test command sets it);
- MCP Inspector's CLI (`@modelcontextprotocol/inspector`): `tools/list --strict` must report
  no finding, and `prompts/get` with arguments must return the rendered text;
- the Python client calling the image generator example (examples/image-generator.json) over
  stdio, its provider the mock's images API (`mock-llm`): the answer must be MCP image content
  holding a PNG of the size the tool asks for.
Expected values come from llmtool's own commands (`render`, `export --to mcp-tool`). Tool
calls run on the local model, which the test command has pulled. The clients are installed
under target/mcp-clients/ (idempotently; LLMTOOL_MCP_CLIENTS_DIR overrides). Exits 1 if a
check fails.
"""
import glob, json, os, shutil, socket, subprocess, sys, tempfile, time, urllib.error, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import BUILD, LLMTOOL, build_binaries  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.environ.get("LLMTOOL_MCP_CLIENTS_DIR", os.path.join(ROOT, "target", "mcp-clients"))
PYTHON_CLIENT = "mcp==2.3.0"
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
EXAMPLES = os.path.join(ROOT, "examples")
MODES = ["legacy", "2026-07-28"]

# Runs inside the client's environment: one transport, one protocol mode.
CLIENT = r'''
import asyncio, json, os, shutil, sys
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
import mcp_types as types

target, mode, expected_path = sys.argv[1], sys.argv[2], sys.argv[3]
expected = json.load(open(expected_path, encoding="utf-8"))
failures = []

def check(condition, what):
    if not condition:
        failures.append(what)

async def wait_for_change(client, changed, action):
    """Runs `action` and waits until the client is told the prompts changed."""
    if mode == "legacy":
        changed.clear()
        action()
        await asyncio.wait_for(changed.wait(), 20)
        return
    async with client.listen(prompts_list_changed=True, tools_list_changed=True) as subscription:
        action()
        async def first():
            async for event in subscription:
                return event
        event = await asyncio.wait_for(first(), 20)
        check(type(event).__name__.endswith("ListChanged"), f"listen gave {event!r}")

async def main():
    changed = asyncio.Event()
    async def on_message(message):
        method = getattr(getattr(message, "root", message), "method", None) or getattr(message, "method", None)
        if method == "notifications/prompts/list_changed":
            changed.set()
    if target.startswith("http"):
        server = target
    else:
        server = StdioServerParameters(command=expected["llmtool"], args=["mcp", "--log-level", "warn", target])
    async with Client(server, mode=mode, message_handler=on_message) as client:
        prompts = await client.list_prompts()
        names = sorted(p.name for p in prompts.prompts)
        check(names == sorted(expected["prompts"]), f"prompts/list gave {names}")
        for case in expected["renders"]:
            got = await client.get_prompt(case["name"], case["arguments"])
            text = got.messages[0].content.text
            check(got.messages[0].role == "user", f"{case['name']}: role {got.messages[0].role}")
            check(text == case["text"], f"prompts/get {case['name']}: {text!r} != {case['text']!r}")
        try:
            await client.get_prompt("strategy_consultant", {"frameworks": "SWOT, Nope"})
            check(False, "a bad value was accepted")
        except MCPError as error:
            check(error.error.code == -32602, f"bad value: code {error.error.code}")
            for part in expected["render_errors"]:
                check(part in error.error.message, f"bad value: {part!r} not in {error.error.message!r}")
        reference = types.PromptReference(type="ref/prompt", name="strategy_consultant")
        completed = await client.complete(reference, {"name": "frameworks", "value": "p"})
        check(completed.completion.values == ["Porter's five forces", "PESTLE"], f"complete gave {completed.completion.values}")
        tools = await client.list_tools()
        for tool in tools.tools:
            check(tool.input_schema == expected["schemas"].get(tool.name), f"tools/list {tool.name}: inputSchema differs")
            check(tool.annotations.read_only_hint is True, f"{tool.name}: readOnlyHint")
        called = await client.call_tool("strategy_consultant", {"situation": "A profitable bakery wants to open a second shop on a busy street."})
        answer = (called.structured_content or {}).get("answer")
        check(not called.is_error and answer in ("go", "wait", "stop"), f"tools/call gave {called}")
        check(called.content[0].text == answer, f"tools/call text {called.content[0].text!r} != {answer!r}")
        missing = await client.call_tool("strategy_consultant", {})
        check(missing.is_error and "situation" in missing.content[0].text, f"a call with no situation gave {missing}")
        # A new tool file is picked up and announced; removing it is too.
        folder, added = expected["folder"], os.path.join(expected["folder"], f"added-{os.getpid()}.json")
        def add():
            tool = json.load(open(os.path.join(folder, "teach-me-anything.json"), encoding="utf-8"))
            tool["metadata"]["prompt_name"] = "Added while serving"
            json.dump(tool, open(added, "w", encoding="utf-8"))
        await wait_for_change(client, changed, add)
        names = [p.name for p in (await client.list_prompts()).prompts]
        check("added_while_serving" in names, f"after adding a file: {names}")
        await wait_for_change(client, changed, lambda: os.remove(added))
        names = [p.name for p in (await client.list_prompts()).prompts]
        check("added_while_serving" not in names, f"after removing it: {names}")
        # A file that turns invalid keeps serving its last good version.
        if mode == "legacy":
            path = os.path.join(folder, "teach-me-anything.json")
            good = open(path, encoding="utf-8").read()
            open(path, "w", encoding="utf-8").write(good[: len(good) // 2])
            await asyncio.sleep(1.5)
            case = next(c for c in expected["renders"] if c["name"] == "teach_me_anything")
            got = await client.get_prompt(case["name"], case["arguments"])
            check(got.messages[0].content.text == case["text"], "an invalid file replaced its good version")
            open(path, "w", encoding="utf-8").write(good)
            await asyncio.sleep(0.5)
    print(json.dumps(failures))

asyncio.run(main())
'''


# Runs inside the client's environment: `llmtool serve`'s /mcp, with a library token; a tool
# is published through another server of the same database while the client listens.
REGISTRY_CLIENT = r"""
import asyncio, json, subprocess, sys
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

url, token, mode, expected_name = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
publish = json.loads(sys.argv[5])
failures = []

def check(condition, what):
    if not condition:
        failures.append(what)

async def main():
    changed = asyncio.Event()
    async def on_message(message):
        method = getattr(getattr(message, "root", message), "method", None) or getattr(message, "method", None)
        if method == "notifications/tools/list_changed":
            changed.set()
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with Client(streamable_http_client(url, http_client=http), mode=mode, message_handler=on_message) as client:
        before = sorted(t.name for t in (await client.list_tools()).tools)
        check("teach_me_anything" in before, f"the built-in tools are not listed: {before}")
        check(expected_name not in before, f"{expected_name} is listed before it is published")
        if mode == "legacy":
            subprocess.run(publish, check=True)
            await asyncio.wait_for(changed.wait(), 20)
        else:
            async with client.listen(tools_list_changed=True) as subscription:
                subprocess.run(publish, check=True)
                async def first():
                    async for event in subscription:
                        return event
                event = await asyncio.wait_for(first(), 20)
                check(type(event).__name__.endswith("ListChanged"), f"listen gave {event!r}")
        after = sorted(t.name for t in (await client.list_tools()).tools)
        check(expected_name in after, f"after publishing on the other server: {after}")
        prompt = await client.get_prompt(expected_name, {"topic": "tides"})
        check("tides" in prompt.messages[0].content.text, f"prompts/get gave {prompt}")
    print(json.dumps(failures))

asyncio.run(main())
"""


# Runs inside the client's environment: an image tool called over stdio.
IMAGE_CLIENT = r"""
import asyncio, base64, json, struct, sys
from mcp import Client
from mcp.client.stdio import StdioServerParameters

llmtool, tool, config, data, mode = sys.argv[1:6]
failures = []

def check(condition, what):
    if not condition:
        failures.append(what)

async def main():
    env = {"MOCK_KEY": "sk-mcp-clients-images", "LLMTOOL_DATA_DIR": data, "XDG_CONFIG_HOME": "/nonexistent"}
    args = ["mcp", "--log-level", "warn", "--config", config, "--model", "mock/gpt-image-1", tool]
    async with Client(StdioServerParameters(command=llmtool, args=args, env=env), mode=mode) as client:
        called = await client.call_tool("image_generator", {"subject": "a lighthouse in a storm", "style": "watercolour"})
        check(not called.is_error, f"the call failed: {called}")
        images = [c for c in called.content if c.type == "image"]
        check(len(images) == 1, f"{len(images)} image blocks in {called.content!r}"[:500])
        if images:
            check(images[0].mime_type == "image/png", f"media type {images[0].mime_type}")
            png = base64.b64decode(images[0].data)
            check(png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR", "not a PNG")
            width, height = struct.unpack(">II", png[16:24])
            check((width, height) == (1024, 1024), f"a {width}x{height} picture")
    print(json.dumps(failures))

asyncio.run(main())
"""


def image_tool_over_stdio(python, work):
    """(client runs, failures) of the image tool's call, on the mock's images API."""
    mock = subprocess.Popen([os.path.join(BUILD, "mock-llm"), "127.0.0.1:0"], stdout=subprocess.PIPE, text=True)
    checks, failures = 0, []
    try:
        url = mock.stdout.readline().strip()
        config = os.path.join(work, "images-config.toml")
        with open(config, "w", encoding="utf-8") as out:
            out.write(f'[providers.mock]\napi = "openai"\nbase_url = "{url}/v1"\napi_key_env = "MOCK_KEY"\n')
        tool = os.path.join(EXAMPLES, "image-generator.json")
        for mode in MODES:
            data = os.path.join(work, f"images-data-{mode}")
            result = subprocess.run([python, "-c", IMAGE_CLIENT, LLMTOOL, tool, config, data, mode], capture_output=True, text=True, timeout=300)
            checks += 1
            label = f"Python SDK calling the image generator, {mode}"
            failures += client_problems(label, result)
    finally:
        mock.terminate()
        mock.wait(timeout=10)
    return checks, failures


def psql():
    found = shutil.which("psql")
    if found:
        return found
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))
    return candidates[-1] if candidates else None


def start_serve(database, data):
    port = free_port()
    env = {**os.environ, "LLMTOOL_DATA_DIR": data, "LLMTOOL_NO_LOG": "1"}
    process = subprocess.Popen([LLMTOOL, "serve", "--db", database, "--listen", f"127.0.0.1:{port}"], env=env, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("llmtool serve did not start listening")


def registry_on_two_servers(python, work):
    """(client runs, failures) of the two-server check."""
    server = os.environ.get("LLMTOOL_TEST_POSTGRES")
    if not server or not psql():
        if os.environ.get("CI"):
            return 1, ["two servers on PostgreSQL: LLMTOOL_TEST_POSTGRES or psql is missing"]
        log("two servers on PostgreSQL: skipped (no LLMTOOL_TEST_POSTGRES)")
        return 0, []
    name = f"llmtool_mcp_clients_{os.getpid()}"
    subprocess.run([psql(), server, "-qc", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    database = server.rsplit("/", 1)[0] + "/" + name
    data = os.path.join(work, "serve-data")
    servers, failures, checks = [], [], 0
    try:
        token = llmtool("token", "create", "ci", "--role", "editor", "--db", database).stdout.strip()
        one, one_url = start_serve(database, data)
        servers.append(one)
        other, other_url = start_serve(database, data)
        servers.append(other)
        request = urllib.request.Request(f"{other_url}/mcp", data=b"{}", method="POST", headers={"content-type": "application/json"})
        try:
            status = urllib.request.urlopen(request, timeout=10).status
        except urllib.error.HTTPError as error:
            status = error.code
        checks += 1
        if status != 401:
            failures.append(f"/mcp without a token answered {status}, not 401")
        for mode in MODES:
            tool = json.load(open(os.path.join(EXAMPLES, "teach-me-anything.json"), encoding="utf-8"))
            title = f"Published elsewhere {mode.replace('-', ' ')}"
            tool["metadata"]["prompt_name"] = title
            path = os.path.join(work, f"published-{mode}.json")
            json.dump(tool, open(path, "w", encoding="utf-8"))
            expected_name = "_".join(title.lower().split())
            publish = [LLMTOOL, "publish", path, "--registry", one_url]
            env = {**os.environ, "LLMTOOL_TOKEN": token, "LLMTOOL_DATA_DIR": data}
            result = subprocess.run([python, "-c", REGISTRY_CLIENT, f"{other_url}/mcp", token, mode, expected_name, json.dumps(publish)], capture_output=True, text=True, timeout=300, env=env)
            checks += 1
            label = f"Python SDK on two `llmtool serve` over PostgreSQL, {mode}"
            failures += client_problems(label, result)
    finally:
        for process in servers:
            process.terminate()
            process.wait(timeout=10)
        subprocess.run([psql(), server, "-qc", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], capture_output=True)
    return checks, failures


def client_problems(label, result):
    """What a client run found wrong: its own list (its last line of output), or that it
    failed; logged under `label`."""
    if result.returncode != 0:
        return [f"{label}: the client failed:\n{result.stderr[-3000:]}"]
    problems = json.loads(result.stdout.strip().splitlines()[-1])
    log(f"{label}: {'ok' if not problems else f'{len(problems)} problem(s)'}")
    return [f"{label}: {p}" for p in problems]


def log(message):
    print(f"[mcp-clients] {message}", flush=True)


def client_python():
    python = os.path.join(WORK, "venv", "bin", "python")
    probe = "import mcp, importlib.metadata as m; assert m.version('mcp') == '2.3.0'"
    if os.path.exists(python) and subprocess.run([python, "-c", probe], capture_output=True).returncode == 0:
        return python
    log(f"installing {PYTHON_CLIENT} (once)")
    subprocess.run([sys.executable, "-m", "venv", os.path.join(WORK, "venv")], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", PYTHON_CLIENT], check=True)
    return python


def inspector():
    folder = os.path.join(WORK, "inspector")
    binary = os.path.join(folder, "node_modules", ".bin", "mcp-inspector")
    if not os.path.exists(binary):
        log(f"installing {INSPECTOR} (once)")
        os.makedirs(folder, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", folder, "--no-audit", "--no-fund", "--loglevel=error", INSPECTOR], check=True)
    return binary


def llmtool(*args, stdin=None):
    result = subprocess.run([LLMTOOL, *args], capture_output=True, text=True, input=stdin)
    return result


def expectations(folder):
    """What the clients must see, from llmtool's own commands."""
    prompts, renders, schemas = [], [], {}
    for file in sorted(os.listdir(folder)):
        if file.endswith(".tests.json"):
            continue  # a tool's test file, which llmtool mcp does not serve
        path = os.path.join(folder, file)
        prompt = json.loads(llmtool("export", path, "--to", "mcp-prompt").stdout)
        tool = json.loads(llmtool("export", path, "--to", "mcp-tool").stdout)
        prompts.append(prompt["name"])
        schemas[tool["name"]] = tool["inputSchema"]
        arguments = {a["name"]: f"value of {a['name']}: \"quoted\" {{{{x}}}} $y" for a in prompt["arguments"] if a["required"]}
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as values:
            json.dump(arguments, values)
        text = llmtool("render", path, "--vars", values.name).stdout
        os.unlink(values.name)
        renders.append({"name": prompt["name"], "arguments": arguments, "text": text})
    bad = llmtool("render", os.path.join(folder, "strategy-consultant.json"), "--var", "frameworks=SWOT", "--var", "frameworks=Nope")
    errors = [line.split("]: ", 1)[1] for line in bad.stderr.splitlines() if line.startswith("error[")]
    return {"llmtool": LLMTOOL, "folder": folder, "prompts": prompts, "renders": renders, "schemas": schemas, "render_errors": errors}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_http(folder):
    port = free_port()
    process = subprocess.Popen([LLMTOOL, "mcp", "--http", f"127.0.0.1:{port}", "--log-level", "warn", folder])
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("llmtool mcp --http did not start listening")


def main():
    build_binaries()
    python = client_python()
    inspector_bin = inspector()
    failures, checks = [], 0
    with tempfile.TemporaryDirectory() as work:
        folder = os.path.join(work, "tools")
        # The prompt tools: the smart example (examples/smart/) has no prompt to compare, and
        # its MCP calls are tested by crates/llmtool/tests/smart.rs; examples/data/ holds the
        # sample database of the SQL Assistant (database), no tool.
        shutil.copytree(EXAMPLES, folder, ignore=shutil.ignore_patterns("smart", "data"))
        expected_path = os.path.join(work, "expected.json")
        expected = expectations(folder)
        json.dump(expected, open(expected_path, "w", encoding="utf-8"))
        for transport in ["stdio", "http"]:
            for mode in MODES:
                server, target = (None, folder) if transport == "stdio" else start_http(folder)
                try:
                    result = subprocess.run([python, "-c", CLIENT, target, mode, expected_path], capture_output=True, text=True, timeout=600)
                finally:
                    if server:
                        server.terminate()
                        server.wait(timeout=10)
                checks += 1
                label = f"Python SDK over {transport}, {mode}"
                failures += client_problems(label, result)
        more_checks, more_failures = registry_on_two_servers(python, work)
        checks += more_checks
        failures += more_failures
        more_checks, more_failures = image_tool_over_stdio(python, work)
        checks += more_checks
        failures += more_failures
        # MCP Inspector's CLI, over stdio and over HTTP.
        server_command = ["--", LLMTOOL, "mcp", "--log-level", "warn", folder]
        http_server, url = start_http(folder)
        try:
            for transport, target in [("stdio", server_command), ("http", ["--transport", "http", "--server-url", url])]:
                listed = subprocess.run([inspector_bin, "--cli", "--method", "tools/list", "--strict", *target], capture_output=True, text=True, timeout=120)
                checks += 1
                findings = listed.stderr.strip()
                if listed.returncode != 0 or findings or len(json.loads(listed.stdout)["tools"]) != len(expected["prompts"]):
                    failures.append(f"Inspector tools/list --strict over {transport}: exit {listed.returncode}, findings: {findings[-2000:]}")
                case = next(c for c in expected["renders"] if c["name"] == "teach_me_anything")
                pairs = [f"{k}={v}" for k, v in case["arguments"].items()]
                got = subprocess.run([inspector_bin, "--cli", "--method", "prompts/get", "--prompt-name", "teach_me_anything", "--prompt-args", *pairs, *target], capture_output=True, text=True, timeout=120)
                checks += 1
                text = json.loads(got.stdout)["messages"][0]["content"]["text"] if got.returncode == 0 else None
                if text != case["text"]:
                    failures.append(f"Inspector prompts/get over {transport}: {text!r} != {case['text']!r} ({got.stderr[-1000:]})")
                log(f"Inspector over {transport}: done")
        finally:
            http_server.terminate()
            http_server.wait(timeout=10)
    for failure in failures:
        log(f"FAIL {failure}")
    log(f"{checks} client runs, {len(failures)} problem(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
