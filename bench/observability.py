#!/usr/bin/env python3
"""What metrics and traces cost `llmtool serve` under load (run by bench/observability.sh).

usage: bench/observability.py [SECONDS=10] [ROUNDS=3]

`GET /api/v1/tools/{slug}` (a cached read, public reading, no rate limit, SQLite, release
build) loaded by wrk (2 threads, 32 connections, SECONDS each), with
- both off: `--no-metrics`, no OTLP endpoint;
- both on: metrics counted and scraped every second (as Prometheus would), and every request's
  spans (the request's, and its database query's) exported over OTLP/HTTP (batched) to a sink
  that answers 200 at once (nginx), so that what is measured is llmtool's side, not a
  receiver's;
- both on, one trace in ten kept (`OTEL_TRACES_SAMPLER=parentbased_traceidratio`, `0.1`):
  what a busy deployment sets.
The three alternate for ROUNDS rounds each; the better round of each is kept. Prints
throughput and p99 of each, and the ratios to off (the goal: at least 0.9).

Needs nginx and wrk (Debian's packages; installed if missing, as root).
"""
import os, re, shutil, subprocess, sys, tempfile, threading, time, urllib.request

SECONDS = sys.argv[1] if len(sys.argv) > 1 else "10"
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLMTOOL = os.path.join(ROOT, "target", "release", "llmtool")
SLUG = "teach-me-anything"


def need(program, package):
    if shutil.which(program) is None and not os.path.exists(f"/usr/sbin/{program}"):
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", package], check=True)


def wrk(url):
    """(requests per second, p99 ms) of wrk on `url`."""
    out = subprocess.run(["wrk", "-t2", "-c32", f"-d{SECONDS}s", "--latency", url],
                         capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    value, unit = re.search(r"\s99%\s+([\d.]+)(us|ms|s)", out).groups()
    if re.search(r"Non-2xx or 3xx responses: (\d+)", out):
        sys.exit(f"{url}: failed responses:\n{out}")
    return rate, float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def sink(work):
    """nginx answering every OTLP export with 200: its URL and process."""
    port = free_port()
    prefix = os.path.join(work, "sink")
    os.makedirs(prefix, exist_ok=True)
    conf = os.path.join(prefix, "nginx.conf")
    user = "user root;" if os.geteuid() == 0 else ""
    with open(conf, "w") as file:
        file.write(f"""worker_processes 1; pid {prefix}/nginx.pid; error_log {prefix}/error.log warn; {user}
events {{ worker_connections 256; }}
http {{ access_log off; client_body_temp_path {prefix}/body; client_max_body_size 64m;
  server {{ listen 127.0.0.1:{port}; location / {{ return 200; }} }} }}
""")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    process = subprocess.Popen([nginx, "-p", prefix, "-c", conf, "-g", "daemon off;"])
    time.sleep(0.5)
    return f"http://127.0.0.1:{port}", process


def free_port():
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve(data, extra, env):
    server = subprocess.Popen([LLMTOOL, "serve", "--listen", "127.0.0.1:0", "--public-read", "--rate-limit", "0", *extra],
                              env={**env, "LLMTOOL_DATA_DIR": data}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    for line in server.stderr:
        if line.startswith("llmtool serve: http://"):
            threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
            return server, line.split()[2].rsplit("/api/v1", 1)[0]
    sys.exit("llmtool serve did not start")


def scrape(url, stop):
    while not stop.is_set():
        urllib.request.urlopen(f"{url}/metrics").read()
        stop.wait(1.0)


def main():
    need("nginx", "nginx")
    need("wrk", "wrk")
    if not os.path.exists(LLMTOOL):
        sys.exit("build it first: cargo build --release -p llmtool")
    work = tempfile.mkdtemp(prefix="llmtool-observability-")
    sink_url, sink_process = sink(work)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    on_env = {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": sink_url, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
    sampled_env = {**on_env, "OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.1"}
    envs = {"off": env, "on": on_env, "sampled": sampled_env}
    results = {"off": [], "on": [], "sampled": []}
    try:
        for _ in range(ROUNDS):
            for side in ("off", "on", "sampled"):
                data = os.path.join(work, f"data-{side}")
                extra = ["--no-metrics"] if side == "off" else []
                server, url = serve(data, extra, envs[side])
                stop = threading.Event()
                scraper = None
                try:
                    urllib.request.urlopen(f"{url}/api/v1/tools/{SLUG}").read()  # warm the cache
                    if side != "off":
                        scraper = threading.Thread(target=scrape, args=(url, stop), daemon=True)
                        scraper.start()
                    results[side].append(wrk(f"{url}/api/v1/tools/{SLUG}"))
                finally:
                    stop.set()
                    server.terminate()
                    server.wait()
                print(f"{side}: {results[side][-1][0]:.0f} req/s, p99 {results[side][-1][1]:.2f} ms", flush=True)
    finally:
        sink_process.terminate()
        shutil.rmtree(work, ignore_errors=True)
    best = {side: max(rounds) for side, rounds in results.items()}
    print(f"\nGET /api/v1/tools/{{slug}}, best of {ROUNDS} rounds of {SECONDS} s each:")
    print(f"  metrics and traces off: {best['off'][0]:.0f} req/s, p99 {best['off'][1]:.2f} ms")
    print(f"  metrics and traces on:  {best['on'][0]:.0f} req/s, p99 {best['on'][1]:.2f} ms")
    print(f"  on, 1 trace in 10 kept: {best['sampled'][0]:.0f} req/s, p99 {best['sampled'][1]:.2f} ms")
    print(f"  ratio on/off: {best['on'][0] / best['off'][0]:.2f}x, sampled/off: {best['sampled'][0] / best['off'][0]:.2f}x (goal >= 0.9x)")


if __name__ == "__main__":
    main()
