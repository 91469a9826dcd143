#!/usr/bin/env python3
"""Operating `llmtool serve` with the programs operators run beside it.

Prometheus (Debian's `prometheus`, installed by the test command) scrapes a running server's
`--metrics-listen` address once a second while tools run on the mock provider (`mock-llm`)
on two models; its HTTP API then answers PromQL queries: the run count by model, the requests
by route, a latency quantile from the histogram, and `up`. Exits 1 when a check fails.

Run by scripts/test.sh after the binaries are built (target/debug/llmtool, mock-llm).
"""
import json, os, shutil, socket, subprocess, sys, tempfile, threading, time
import urllib.error, urllib.parse, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402
from peers import LLMTOOL  # noqa: E402

MOCK = os.path.join(ROOT, "target", "debug", "mock-llm")
checks = Checks("operations")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def request(url, data=None, token=None, method=None, headers=None, timeout=20):
    """The status, headers and body of an HTTP request (an error status is an answer too)."""
    headers = dict(headers or {})
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if data is not None and not isinstance(data, bytes):
        data = json.dumps(data).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as answer:
            return answer.status, dict(answer.headers), answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


class Process:
    """A program started in the background, its standard error kept (read by a thread, so it
    never blocks on a full pipe), killed at the end."""

    def __init__(self, args, env=None, cwd=None):
        self.lines = []
        self.seen = threading.Condition()
        self.process = subprocess.Popen(args, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            with self.seen:
                self.lines.append(line.rstrip("\n"))
                self.seen.notify_all()
        with self.seen:
            self.seen.notify_all()

    def wait_for(self, prefix, timeout=60):
        """The first line that starts with `prefix`, waiting for it."""
        deadline = time.monotonic() + timeout
        with self.seen:
            while True:
                for line in self.lines:
                    if line.startswith(prefix):
                        return line
                left = deadline - time.monotonic()
                if left <= 0 or self.process.poll() is not None:
                    raise RuntimeError(f"no line `{prefix}` from {self.process.args[0]}:\n" + "\n".join(self.lines[-30:]))
                self.seen.wait(left)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def llmtool(env, *args):
    done = subprocess.run([LLMTOOL, *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"llmtool {' '.join(args)}: {done.stderr}")
    return done.stdout


def library(work, mock_url):
    """A data folder with an admin's token and a config naming the mock on two models: the
    environment to run llmtool in, and the token."""
    env = dict(os.environ, LLMTOOL_DATA_DIR=os.path.join(work, "data"), XDG_CONFIG_HOME=os.path.join(work, "config"),
               LLMTOOL_NO_LOG="1", MOCK_KEY="mock-secret-key-2718")
    env.pop("LLMTOOL_REGISTRY", None)
    env.pop("LLMTOOL_TOKEN", None)
    config = os.path.join(work, "llmtool.toml")
    with open(config, "w") as file:
        file.write(f'[providers.mock]\napi = "openai"\nbase_url = "{mock_url}/v1"\napi_key_env = "MOCK_KEY"\n\n'
                   '[prices."mock/alpha"]\ninput = 1.0\noutput = 2.0\n\n[prices."mock/beta"]\ninput = 3.0\noutput = 4.0\n')
    token = llmtool(env, "token", "create", "ops", "--role", "admin").strip()
    return env, config, token


def publish(env, url, token, work, slug, model):
    tool = {"model_prompt": "A line about {{topic}}.",
            "metadata": {"prompt_name": slug, "description": f"Writes a line on {model}.", "model_version": [f"mock/{model}"],
                         "timestamp": "2026-11-27T10:00:00Z",
                         "variables": [{"name": "topic", "type": "text", "description": "What about."}]}}
    path = os.path.join(work, f"{slug}.json")
    with open(path, "w") as file:
        json.dump(tool, file)
    llmtool(dict(env, LLMTOOL_REGISTRY=url, LLMTOOL_TOKEN=token), "publish", path)


def run(url, token, slug, topic):
    status, _, body = request(f"{url}/api/v1/tools/{slug}/run", {"values": {"topic": topic}}, token)
    return status == 200 and "event: done" in body and '"outcome":"ok"' in body


def promql(prometheus, query):
    """The result vector of an instant query, as {labels-tuple: value}."""
    status, _, body = request(f"{prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": query}))
    if status != 200:
        return None
    data = json.loads(body)["data"]["result"]
    return {tuple(sorted(item["metric"].items())): float(item["value"][1]) for item in data}


def prometheus_scrapes_the_server(work, mock_url):
    env, config, token = library(work, mock_url)
    server = Process([LLMTOOL, "serve", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
                      "--config", config], env=env)
    prometheus = None
    try:
        metrics_at = server.wait_for("llmtool serve: metrics at http://").split("http://", 1)[1]
        metrics_host = metrics_at.split("/", 1)[0]
        url = "http://" + server.wait_for("llmtool serve: http://").split("http://", 1)[1].split("/", 1)[0]
        publish(env, url, token, work, "alpha-line", "alpha")
        publish(env, url, token, work, "beta-line", "beta")
        ran = [run(url, token, "alpha-line", f"tide {n}") for n in range(3)]
        ran += [run(url, token, "beta-line", f"wind {n}") for n in range(2)]
        checks.check("five runs on two models through the API", all(ran), str(ran))

        port = free_port()
        config_file = os.path.join(work, "prometheus.yml")
        with open(config_file, "w") as file:
            file.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                       "scrape_configs:\n  - job_name: llmtool\n    static_configs:\n"
                       f"      - targets: ['{metrics_host}']\n")
        prometheus = Process(["prometheus", f"--config.file={config_file}", f"--storage.tsdb.path={work}/tsdb",
                              f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"], cwd=work)
        base = f"http://127.0.0.1:{port}"
        by_model = None
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                by_model = promql(base, "sum by (model) (llmtool_runs_total)")
            except (OSError, ValueError, KeyError):
                by_model = None
            if by_model and len(by_model) == 2:
                break
            time.sleep(0.5)
        counts = {dict(labels).get("model"): value for labels, value in (by_model or {}).items()}
        checks.check("PromQL: the run count by model", counts == {"alpha": 3.0, "beta": 2.0}, f"{counts}")
        up = promql(base, 'up{job="llmtool"}') or {}
        checks.check("PromQL: the target is up", list(up.values()) == [1.0], f"{up}")
        runs = promql(base, 'sum by (route, status) (llmtool_http_requests_total{route="/api/v1/tools/{slug}/run"})') or {}
        runs = {dict(labels)["status"]: value for labels, value in runs.items()}
        checks.check("PromQL: the run requests by route and status", runs == {"200": 5.0}, f"{runs}")
        cost = promql(base, "sum by (model) (llmtool_run_cost_usd_total)") or {}
        cost = {dict(labels).get("model"): value for labels, value in cost.items()}
        checks.check("PromQL: the cost by model", set(cost) == {"alpha", "beta"} and all(v > 0 for v in cost.values()), f"{cost}")
        quantile = promql(base, "histogram_quantile(0.99, sum by (le) (llmtool_http_request_duration_seconds_bucket))") or {}
        checks.check("PromQL: a latency quantile from the histogram",
                     len(quantile) == 1 and 0 < next(iter(quantile.values())) < 10, f"{quantile}")
        memory = promql(base, "process_resident_memory_bytes") or {}
        checks.check("PromQL: the process's memory", len(memory) == 1 and next(iter(memory.values())) > 1e6, f"{memory}")
    finally:
        if prometheus:
            prometheus.stop()
        server.stop()


def main():
    if not shutil.which("prometheus"):
        checks.check("Debian's prometheus is installed (the test command installs it)", False)
        checks.finish()
    work = tempfile.mkdtemp(prefix="llmtool-operations-")
    mock = Process([MOCK, "127.0.0.1:0", "3"])
    try:
        mock_url = mock.wait_for("http://")
        os.makedirs(os.path.join(work, "prometheus"))
        prometheus_scrapes_the_server(os.path.join(work, "prometheus"), mock_url)
    finally:
        mock.stop()
        shutil.rmtree(work, ignore_errors=True)
    checks.finish()


if __name__ == "__main__":
    main()
