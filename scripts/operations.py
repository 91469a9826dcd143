#!/usr/bin/env python3
"""Operating `llmtool serve` with the programs operators run beside it.

Prometheus (Debian's `prometheus`, installed by the test command) scrapes a running server's
`--metrics-listen` address once a second while tools run on the mock provider (`mock-llm`)
on two models; its HTTP API then answers PromQL queries: the run count by model, the requests
by route, a latency quantile from the histogram, and `up`.

Two servers on one PostgreSQL library behind nginx (Debian's), configured by the blocks
docs/deploy.md shows (read from it):
a studio session, rate limits, one follow-up of a conversation at a time, the read cache after
a publish and MCP sessions (a client pinned to one server by its token) hold whichever server
answers; then one server is killed (SIGKILL) under load, and the other goes on serving with
every acknowledged run kept.

Traces: a receiver that decodes OTLP with the official `opentelemetry-proto` package (over
HTTP/protobuf, and over gRPC with `grpcio`; both installed under target/operations-py) gets
the spans of a server's run (the client's `traceparent` its parent, the provider given ours)
and of `llmtool run`: the request, the run and the model call with the GenAI attributes, the
database queries, and no prompt or value unless `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`
lets them in. Exits 1 when a check fails.

Run by scripts/test.sh after the binaries are built (llmtool and mock-llm, in checks.BUILD).
"""
import http.client, json, os, shutil, socket, subprocess, sys, tempfile, threading, time
import urllib.error, urllib.parse, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import BUILD, Checks, venv_python  # noqa: E402
from peers import LLMTOOL  # noqa: E402

MOCK = os.path.join(BUILD, "mock-llm")
VENV = os.environ.get("LLMTOOL_OPERATIONS_DIR", os.path.join(ROOT, "target", "operations-py"))
RECEIVER_PACKAGES = ["opentelemetry-proto==1.45.2", "grpcio==1.85.1"]
RECEIVER_PROBE = "import grpc; from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc"

# An OTLP receiver, run by the virtual environment's Python: HTTP/protobuf on one port, gRPC on
# another; each span received is printed as a JSON line (its transport, resource, name, kind,
# ids, attributes and status).
RECEIVER = r'''
import concurrent.futures, json, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

lock = threading.Lock()

def value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None

def show(request, transport):
    with lock:
        for resource_spans in request.resource_spans:
            resource = {kv.key: value(kv.value) for kv in resource_spans.resource.attributes}
            for scope in resource_spans.scope_spans:
                for span in scope.spans:
                    print(json.dumps({"transport": transport, "resource": resource, "name": span.name,
                        "kind": span.kind, "trace_id": span.trace_id.hex(), "span_id": span.span_id.hex(),
                        "parent": span.parent_span_id.hex(), "status": span.status.code,
                        "attributes": {kv.key: value(kv.value) for kv in span.attributes}}), flush=True)

class Http(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path != "/v1/traces":
            self.send_response(404); self.end_headers(); return
        show(trace_service_pb2.ExportTraceServiceRequest.FromString(body), "http")
        answer = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)
    def log_message(self, *args):
        pass

class Grpc(trace_service_pb2_grpc.TraceServiceServicer):
    def Export(self, request, context):
        show(request, "grpc")
        return trace_service_pb2.ExportTraceServiceResponse()

http = ThreadingHTTPServer(("127.0.0.1", 0), Http)
threading.Thread(target=http.serve_forever, daemon=True).start()
server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=4))
trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Grpc(), server)
grpc_port = server.add_insecure_port("127.0.0.1:0")
server.start()
print(json.dumps({"http": http.server_address[1], "grpc": grpc_port}), flush=True)
threading.Event().wait()
'''
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


# nginx's configuration: its upstreams and locations as docs/deploy.md shows them (read from
# it, with the instances' ports put in), inside a frame of this test's own.
NGINX_FRAME = """
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
{user}
events {{ worker_connections 512; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
{upstreams}
    server {{
        listen 127.0.0.1:{port};
{locations}
    }}
}}
"""


def documented(name):
    """The nginx block between `<!-- NAME:begin -->` and `<!-- NAME:end -->` in docs/deploy.md."""
    with open(os.path.join(ROOT, "docs", "deploy.md")) as file:
        text = file.read()
    block = text.split(f"<!-- {name}:begin -->", 1)[1].split(f"<!-- {name}:end -->", 1)[0]
    return block.strip().removeprefix("```nginx").removesuffix("```").strip()


def nginx_conf(prefix, ports, port):
    upstreams = documented("nginx-upstreams")
    for documented_port, real in zip(("8081", "8082"), ports):
        assert f"127.0.0.1:{documented_port}" in upstreams, "docs/deploy.md names the instances 8081 and 8082"
        upstreams = upstreams.replace(f"127.0.0.1:{documented_port}", f"127.0.0.1:{real}")
    user = "user root;" if os.geteuid() == 0 else ""
    return NGINX_FRAME.format(prefix=prefix, user=user, port=port, upstreams=upstreams,
                              locations=documented("nginx-locations"))


def upstream(headers):
    return next((v for k, v in headers.items() if k.lower() == "x-upstream"), "")


def create_database(server_url, name):
    """A new database on the test command's PostgreSQL cluster: its URL."""
    subprocess.run(["psql", server_url, "-qc", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    return server_url.rsplit("/", 1)[0] + "/" + name


def sql(url, query):
    done = subprocess.run(["psql", url, "-Atc", query], check=True, capture_output=True, text=True)
    return done.stdout.strip()


def two_servers_behind_nginx(work, mock_url, postgres):
    database = create_database(postgres, f"llmtool_ops_{os.getpid()}")
    env, config, token = library(work, mock_url)
    token = llmtool(env, "token", "create", "ops", "--role", "admin", "--db", database).strip()
    viewer = llmtool(env, "token", "create", "reader", "--role", "viewer", "--db", database).strip()
    ports = [free_port(), free_port()]
    port = free_port()
    allowed = f"127.0.0.1:{port}"
    servers = {}

    def start(at):
        server = Process([LLMTOOL, "serve", "--db", database, "--listen", f"127.0.0.1:{at}", "--config", config,
                          "--rate-limit", "300", "--allowed-host", allowed, "--trusted-proxy", "127.0.0.1",
                          "--log-format", "json"], env=env)
        server.wait_for("llmtool serve: http://")
        servers[at] = server

    nginx = None
    try:
        for at in ports:
            start(at)
        prefix = os.path.join(work, "nginx")
        os.makedirs(prefix)
        conf = os.path.join(prefix, "nginx.conf")
        with open(conf, "w") as file:
            file.write(nginx_conf(prefix, ports, port))
        nginx_bin = shutil.which("nginx") or "/usr/sbin/nginx"
        nginx = Process([nginx_bin, "-p", prefix, "-c", conf, "-g", "daemon off;"])
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if request(f"{url}/healthz", timeout=2)[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("nginx never answered: " + "\n".join(nginx.lines))
            time.sleep(0.1)
        every = {f"127.0.0.1:{at}" for at in ports}

        publish(env, url, token, work, "poet", "alpha")
        # A studio session: made on one server, good on both.
        status, headers, _ = request(f"{url}/api/v1/session", {"token": token})
        cookie = next((v for k, v in headers.items() if k.lower() == "set-cookie"), "").split(";", 1)[0]
        seen, good = set(), 0
        for _ in range(16):
            status, headers, _ = request(f"{url}/api/v1/session", headers={"Cookie": cookie})
            good += status == 200
            seen.add(upstream(headers))
        checks.check("a studio session holds on both servers", good == 16 and seen == every, f"{good}/16 from {seen}")

        # The read cache: a new version is what both servers answer, soon after the publish.
        for _ in range(8):
            request(f"{url}/api/v1/tools/poet", token=viewer)
        publish(env, url, token, work, "poet", "beta")
        fresh, deadline = set(), time.monotonic() + 5
        while fresh != every and time.monotonic() < deadline:
            status, headers, body = request(f"{url}/api/v1/tools/poet", token=viewer)
            if status == 200 and json.loads(body)["version"] == 2:
                fresh.add(upstream(headers))
        stale = 0
        for _ in range(20):
            status, headers, body = request(f"{url}/api/v1/tools/poet", token=viewer)
            stale += status != 200 or json.loads(body)["version"] != 2
        checks.check("after a publish, both servers' read caches answer the new version", fresh == every and stale == 0,
                     f"fresh from {fresh}, {stale} stale after")

        # Rate limits: one bucket for the token, whichever server answers.
        limited, seen = 0, set()
        for _ in range(400):
            status, headers, _ = request(f"{url}/api/v1/tools/poet", token=viewer)
            limited += status == 429
            seen.add(upstream(headers))
        checks.check("a token's rate limit is one across the servers", limited >= 60 and seen == every,
                     f"{limited} of 400 refused (300 a minute), from {seen}")

        # One follow-up of a conversation at a time, across servers.
        status, _, body = request(f"{url}/api/v1/tools/poet/run", {"values": {"topic": "tides"}}, token)
        start_event = next(json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:") and '"conversation"' in line)
        conversation = start_event["conversation"]
        outcomes = []

        def follow_up():
            status, headers, _ = request(f"{url}/api/v1/conversations/{conversation}/messages", {"text": "And shorter?"}, token)
            outcomes.append((status, upstream(headers)))

        for _ in range(4):
            pair = [threading.Thread(target=follow_up) for _ in range(2)]
            for thread in pair:
                thread.start()
            for thread in pair:
                thread.join()
        statuses = sorted(status for status, _ in outcomes)
        crossed = any(outcomes[i][1] != outcomes[i + 1][1] and {outcomes[i][0], outcomes[i + 1][0]} == {200, 409}
                      for i in range(0, len(outcomes), 2))
        checks.check("two follow-ups at once: one runs, the other is refused (409), across servers",
                     statuses.count(200) == 4 and statuses.count(409) == 4 and crossed, f"{outcomes}")

        # MCP: a session's requests all reach the server that holds it.
        mcp = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {token}"}
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "ops", "version": "1"}}}
        status, headers, _ = request(f"{url}/mcp", init, headers=mcp)
        session = next((v for k, v in headers.items() if k.lower() == "mcp-session-id"), "")
        mcp["Mcp-Session-Id"] = session
        request(f"{url}/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=mcp)
        listed = [request(f"{url}/mcp", {"jsonrpc": "2.0", "id": n, "method": "tools/list"}, headers=mcp)
                  for n in range(2, 12)]
        checks.check("an MCP session's requests reach its server", session and all(s == 200 and "poet" in b for s, _, b in listed),
                     f"{[s for s, _, _ in listed]}")

        # SIGKILL one server under load: the other goes on, and every acknowledged run is kept.
        runs_before = int(sql(database, "SELECT COUNT(*) FROM runs"))
        stop, acked, failed_after = threading.Event(), [], []
        killed_at = []

        loaders = [llmtool(env, "token", "create", f"load-{n}", "--role", "viewer", "--db", database).strip()
                   for n in range(3)]

        def load(token):
            while not stop.is_set():
                started = time.monotonic()
                try:
                    status, _, body = request(f"{url}/api/v1/tools/poet/run", {"values": {"topic": "load"}}, token, timeout=30)
                    ok = status == 200 and '"outcome":"ok"' in body
                except (OSError, http.client.HTTPException):
                    # A run in flight on the server killed: cut, never acknowledged.
                    ok = False
                if ok:
                    acked.append(started)
                elif killed_at and started > killed_at[0] + 1:
                    failed_after.append(started)
                try:
                    status, _, _ = request(f"{url}/api/v1/tools/poet", token=token, timeout=10)
                except (OSError, http.client.HTTPException):
                    status = 0
                if status != 200 and killed_at and started > killed_at[0] + 1:
                    failed_after.append(started)

        workers = [threading.Thread(target=load, args=(loader,)) for loader in loaders]
        for worker in workers:
            worker.start()
        time.sleep(2)
        victim = servers[ports[0]].process
        victim.kill()
        killed_at.append(time.monotonic())
        time.sleep(4)
        stop.set()
        for worker in workers:
            worker.join()
        after_kill = sum(1 for t in acked if t > killed_at[0])
        checks.check("with one server killed, the other serves every request", after_kill >= 5 and not failed_after,
                     f"{after_kill} runs acknowledged after the kill, {len(failed_after)} failed a second after it")
        kept = int(sql(database, "SELECT COUNT(*) FROM runs")) - runs_before
        checks.check("every acknowledged run is kept", kept >= len(acked), f"{kept} kept, {len(acked)} acknowledged")
        # The server comes back and serves the same library.
        start(ports[0])
        status, _, body = request(f"http://127.0.0.1:{ports[0]}/api/v1/tools/poet", token=viewer)
        checks.check("the killed server, restarted, serves the library", status == 200 and json.loads(body)["version"] == 2, body[:200])
    finally:
        if nginx:
            nginx.stop()
        for server in servers.values():
            server.stop()


def received(receiver, since):
    """The spans the receiver printed after its line `since`."""
    return [json.loads(line) for line in receiver.lines[since:] if line.startswith("{\"transport\"")]


def wait_for_spans(receiver, since, test, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        spans = received(receiver, since)
        if test(spans):
            return spans
        time.sleep(0.2)
    return received(receiver, since)


def traces_reach_an_otlp_receiver(work, mock, mock_url):
    python = venv_python(VENV, RECEIVER_PACKAGES, RECEIVER_PROBE, checks.log)
    receiver = Process([python, "-c", RECEIVER])
    try:
        ports = json.loads(receiver.wait_for("{\"http\""))
        env, config, token = library(work, mock_url)
        secret_topic = "tidepools-of-avalon"
        # A server over HTTP/protobuf; its run's trace under the client's.
        traced = dict(env, OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{ports['http']}", OTEL_SERVICE_NAME="llmtool-ops")
        traced.pop("OTEL_EXPORTER_OTLP_PROTOCOL", None)
        # With the JSON log, whose request span (for the request id) must not be exported twice.
        server = Process([LLMTOOL, "serve", "--listen", "127.0.0.1:0", "--config", config, "--log-format", "json"], env=traced)
        since = len(receiver.lines)
        try:
            url = "http://" + server.wait_for("llmtool serve: http://").split("http://", 1)[1].split("/", 1)[0]
            publish(env, url, token, work, "alpha-line", "alpha")
            client_trace, client_span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
            mock_seen = len(mock.lines)
            status, _, body = request(f"{url}/api/v1/tools/alpha-line/run", {"values": {"topic": secret_topic}}, token,
                                      headers={"traceparent": f"00-{client_trace}-{client_span}-01"})
            checks.check("a traced run through the server", status == 200 and "event: done" in body, body[:300])
        finally:
            server.stop()
        spans = wait_for_spans(receiver, since, lambda spans: any(s["name"].startswith("execute_tool") for s in spans))
        ours = [s for s in spans if s["trace_id"] == client_trace]
        by_name = {s["name"]: s for s in ours}
        request_span = by_name.get("POST /api/v1/tools/{slug}/run")
        checks.check("the request's server span is the client's span's child",
                     request_span is not None and request_span["parent"] == client_span and request_span["kind"] == 2
                     and request_span["attributes"].get("http.response.status_code") == 200
                     and request_span["resource"].get("service.name") == "llmtool-ops",
                     json.dumps(request_span)[:400])
        run = next((s for s in ours if s["name"] == "execute_tool alpha-line"), None)
        attributes = (run or {}).get("attributes", {})
        checks.check("the run's span has the GenAI attributes",
                     run is not None and attributes.get("gen_ai.system") == "openai"
                     and attributes.get("gen_ai.request.model") == "alpha"
                     and attributes.get("gen_ai.usage.input_tokens") == 10
                     and attributes.get("gen_ai.usage.output_tokens") == 3
                     and attributes.get("llmtool.outcome") == "ok",
                     json.dumps(run)[:600] if run else f"spans: {sorted(by_name)}")
        checks.check("the run's span is the request's child, and the request has one span",
                     run is not None and request_span is not None and run["parent"] == request_span["span_id"]
                     and "request" not in by_name,
                     f"spans: {sorted(by_name)}")
        chat = by_name.get("chat alpha")
        checks.check("the model call is a client span under the run",
                     chat is not None and run is not None and chat["parent"] == run["span_id"] and chat["kind"] == 3
                     and chat["attributes"].get("gen_ai.operation.name") == "chat",
                     json.dumps(chat)[:400] if chat else f"spans: {sorted(by_name)}")
        queries = [s for s in spans if s["attributes"].get("db.system.name") == "sqlite"]
        checks.check("the database queries have spans", len(queries) >= 3 and all("db.query.text" in s["attributes"] for s in queries),
                     f"{len(queries)} query spans")
        parents = [line.split(" ", 1)[1] for line in mock.lines[mock_seen:] if line.startswith("traceparent ")]
        checks.check("the provider was given the trace (traceparent)",
                     any(p.split("-")[1] == client_trace and chat and p.split("-")[2] == chat["span_id"] for p in parents), f"{parents}")
        texts = json.dumps(spans)
        checks.check("no prompt and no value in any span", secret_topic not in texts and "A line about" not in texts)

        # `llmtool run` over gRPC; then with the content let in.
        tool = os.path.join(work, "alpha-line.json")
        for capture in (False, True):
            run_env = dict(env, OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{ports['grpc']}", OTEL_EXPORTER_OTLP_PROTOCOL="grpc")
            if capture:
                run_env["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
            since = len(receiver.lines)
            done = subprocess.run([LLMTOOL, "run", tool, "--config", config, "--var", f"topic={secret_topic}"],
                                  env=run_env, capture_output=True, text=True)
            spans = wait_for_spans(receiver, since, lambda spans: any(s["name"].startswith("chat") for s in spans))
            run = next((s for s in spans if s["name"].startswith("execute_tool")), None)
            chat = next((s for s in spans if s["name"] == "chat alpha"), None)
            if not capture:
                checks.check("llmtool run exports its run over gRPC",
                             done.returncode == 0 and run is not None and run["transport"] == "grpc"
                             and run["attributes"].get("gen_ai.request.model") == "alpha"
                             and run["attributes"].get("llmtool.origin") == "run",
                             done.stderr[-300:] + json.dumps(run)[:300])
                checks.check("...without the prompt", secret_topic not in json.dumps(spans))
            else:
                messages = (chat or {}).get("attributes", {}).get("gen_ai.input.messages", "")
                checks.check("with the content let in, the model call's span holds the prompt",
                             secret_topic in messages and "gen_ai.output.messages" in chat["attributes"], json.dumps(chat)[:400])
    finally:
        receiver.stop()


def main():
    if not shutil.which("prometheus"):
        checks.check("Debian's prometheus is installed (the test command installs it)", False)
        checks.finish()
    work = tempfile.mkdtemp(prefix="llmtool-operations-")
    # Each answer takes 200 ms: runs are in flight when a server is killed.
    mock = Process([MOCK, "127.0.0.1:0", "3", "200"])
    try:
        mock_url = mock.wait_for("http://")
        os.makedirs(os.path.join(work, "prometheus"))
        prometheus_scrapes_the_server(os.path.join(work, "prometheus"), mock_url)
        os.makedirs(os.path.join(work, "traces"))
        traces_reach_an_otlp_receiver(os.path.join(work, "traces"), mock, mock_url)
        postgres = os.environ.get("LLMTOOL_TEST_POSTGRES")
        if postgres:
            os.makedirs(os.path.join(work, "nginx"))
            two_servers_behind_nginx(os.path.join(work, "nginx"), mock_url, postgres)
        else:
            checks.check("LLMTOOL_TEST_POSTGRES is set (scripts/postgres.sh start)", False)
    finally:
        mock.stop()
        shutil.rmtree(work, ignore_errors=True)
    checks.finish()


if __name__ == "__main__":
    main()
