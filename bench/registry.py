#!/usr/bin/env python3
"""The tool library's speed, against nginx serving the same bytes (run by bench/registry.sh).

usage: bench/registry.py [SECONDS=10] [TOOLS=10000]

LLMTOOL=PATH measures that build of llmtool (an older one, say) instead of this tree's.

1. GET /api/v1/tools/{slug}: `llmtool serve` (release build, SQLite, public reading, no rate
   limit) against nginx (Debian's) serving the very bytes llmtool answers as a static file.
   Both are loaded by wrk (2 threads, 32 connections, SECONDS each), in two interleaved
   rounds; each side's better round is kept. Throughput and p99 latency, and the ratio.
2. Publishing: TOOLS tool files from ../shared/bench/gen_corpus.py (seed 7), published one by
   one over HTTP by one client: publishes per second, on SQLite and on PostgreSQL (a fresh
   database on the cluster of scripts/postgres.sh, which starts it if needed).
3. Search over those TOOLS tools, on both stores: wrk on `GET /tools?q=WORD` for a few words
   (the same search again and again: answered from the read cache after the first), then wrk
   with bench/search-fresh.lua, where every request is a search never asked before, so none is
   answered from the read cache: the corpus's words typed one keystroke at a time (`r`, `re`,
   ... `review`, `review c`, ...), in phrases of one to three words drawn at random, each
   query once. From 32 connections, then from one (on queries of its own). Throughput, p50 and
   p99, and how many requests were made of how many distinct queries.

Needs nginx and wrk (Debian's packages; installed if missing, as root).
"""
import glob, os, re, shutil, subprocess, sys, tempfile, time, urllib.request

from typed_queries import typed_queries, vocabulary

SECONDS = sys.argv[1] if len(sys.argv) > 1 else "10"
TOOLS = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "bench", "gen_corpus.py")
LLMTOOL = os.environ.get("LLMTOOL") or os.path.join(ROOT, "target", "release", "llmtool")
SLUG = "teach-me-anything"
# The searches asked again and again (answered from the read cache after the first).
REPEATED = ["review", "poem", "translate code"]


def need(program, package):
    if shutil.which(program) is None:
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", package], check=True)


def wrk(url, script=None, connections=32, env=None, requests=None):
    """(requests per second, p50 ms, p99 ms) of wrk on `url` (with the Lua `script`, if any,
    and `env` added to the environment). `requests`, a list, is given the number made."""
    scripted = ["-s", os.path.join(ROOT, "bench", script)] if script else []
    threads = min(2, connections)
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{SECONDS}s", "--latency", *scripted, url],
                         capture_output=True, text=True, check=True, env={**os.environ, **(env or {})}).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    if requests is not None:
        requests.append(int(re.search(r"(\d+) requests in", out).group(1)))
    def percentile(p):
        value, unit = re.search(rf"\s{p}%\s+([\d.]+)(us|ms|s)", out).groups()
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        sys.exit(f"{url}: {errors.group(1)} failed responses")
    return rate, percentile(50), percentile(99)


def serve(data, env, database=None):
    extra = ["--db", database] if database else []
    server = subprocess.Popen([LLMTOOL, "serve", "--listen", "127.0.0.1:0", "--public-read", "--rate-limit", "0", *extra],
                              env={**env, "LLMTOOL_DATA_DIR": data}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    for line in server.stderr:
        if line.startswith("llmtool serve: http://"):
            return server, line.split()[2]
    sys.exit("llmtool serve did not start")


def publish_all(api, token, corpus, files):
    """Publishes every file of `corpus` one by one; publishes per second."""
    start = time.perf_counter()
    for index, name in enumerate(files):
        with open(os.path.join(corpus, name), "rb") as source:
            request = urllib.request.Request(f"{api}/tools?slug=tool-{index}", data=source.read(), method="POST",
                                             headers={"Authorization": f"Bearer {token}"})
        urllib.request.urlopen(request).read()
    return len(files) / (time.perf_counter() - start)


def search_figures(api, store, tools, words):
    """Prints the search's figures on `api`: repeated searches, then searches never asked before."""
    print(f"search over {tools + 8} tools ({store}), wrk -t2 -c32 -d{SECONDS}s:")
    for word in REPEATED:
        rate, p50, p99 = wrk(f"{api}/tools?q={word.replace(' ', '%20')}&limit=20")
        print(f"  q={word!r:18} {rate:8.0f} req/s   p50 {p50:7.2f} ms   p99 {p99:7.2f} ms   (repeated)")
    origin = api.split("/api/", 1)[0]
    for label, connections, seed in [("each search new", 32, 1), ("each new, 1 client", 1, 2)]:
        queries = typed_queries(words, 200_000 if connections > 1 else 60_000, seed, exclude=REPEATED)
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as listed:
            listed.write("\n".join(queries) + "\n")
        made = []
        try:
            rate, p50, p99 = wrk(origin, "search-fresh.lua", connections, {"SEARCH_QUERIES": listed.name}, made)
        finally:
            os.unlink(listed.name)
        repeated = "" if made[0] <= len(queries) else f", SOME REPEATED: {made[0]} requests"
        print(f"  {label:20} {rate:8.0f} req/s   p50 {p50:7.2f} ms   p99 {p99:7.2f} ms   "
              f"({made[0]} requests, each a different query{repeated})")


def postgres_database():
    """A fresh database on the test cluster (started if needed): (URL, psql, server URL)."""
    started = subprocess.run([os.path.join(ROOT, "scripts", "postgres.sh"), "start"], capture_output=True, text=True, check=True)
    server = started.stdout.strip().split("=", 1)[1]
    psql = shutil.which("psql") or sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))[-1]
    name = f"llmtool_bench_{os.getpid()}"
    subprocess.run([psql, server, "-qc", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    return server.rsplit("/", 1)[0] + "/" + name, psql, server, name


def main():
    need("nginx", "nginx")
    need("wrk", "wrk")
    if not os.environ.get("LLMTOOL"):
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "llmtool"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp()
    env = {**os.environ, "LLMTOOL_NO_LOG": "1"}
    data = os.path.join(work, "data")
    token = subprocess.run([LLMTOOL, "token", "create", "bench", "--role", "editor"], env={**env, "LLMTOOL_DATA_DIR": data},
                           capture_output=True, text=True, check=True).stdout.strip()
    server, api = serve(data, env)
    nginx = None
    try:
        body = urllib.request.urlopen(f"{api}/tools/{SLUG}").read()
        static = os.path.join(work, "static")
        os.makedirs(os.path.join(static, "tools"))
        with open(os.path.join(static, "tools", SLUG), "wb") as out:
            out.write(body)
        # nginx's workers run as another user: they must be able to read the file.
        for path in [work, static, os.path.join(static, "tools"), os.path.join(static, "tools", SLUG)]:
            os.chmod(path, 0o755)
        conf = os.path.join(work, "nginx.conf")
        with open(conf, "w") as out:
            out.write(f"""worker_processes auto; pid {work}/nginx.pid; error_log {work}/nginx-error.log; daemon off;
events {{ worker_connections 1024; }}
http {{ access_log off; default_type application/json;
  server {{ listen 127.0.0.1:18099; root {static}; location / {{ }} }} }}
""")
        nginx = subprocess.Popen(["nginx", "-c", conf, "-p", work])
        time.sleep(0.5)
        ours, theirs = [], []
        for _ in range(2):
            ours.append(wrk(f"{api}/tools/{SLUG}"))
            theirs.append(wrk(f"http://127.0.0.1:18099/tools/{SLUG}"))
        nginx.terminate()
        nginx.wait()
        nginx = None
        best = lambda rounds: max(rounds, key=lambda r: r[0])
        (our_rate, _, our_p99), (nginx_rate, _, nginx_p99) = best(ours), best(theirs)
        print(f"GET /tools/{{slug}} ({len(body)} bytes), wrk -t2 -c32 -d{SECONDS}s, best of 2:")
        print(f"  llmtool serve: {our_rate:10.0f} req/s   p99 {our_p99:7.2f} ms")
        print(f"  nginx:         {nginx_rate:10.0f} req/s   p99 {nginx_p99:7.2f} ms")
        print(f"  throughput {our_rate / nginx_rate:.2f}x nginx, p99 {our_p99 / nginx_p99:.2f}x nginx's")

        corpus = os.path.join(work, "corpus")
        subprocess.run([sys.executable, CORPUS, corpus, str(TOOLS), "7"], check=True, stdout=subprocess.DEVNULL)
        files = sorted(os.listdir(corpus))
        rate = publish_all(api, token, corpus, files)
        print(f"publishing {len(files)} tools one by one (SQLite): {rate:.0f} publishes/s")
        words = vocabulary(corpus)
        print(f"the corpus's vocabulary: {len(words)} words besides numbers")
        search_figures(api, "SQLite", len(files), words)

        database, psql, cluster, name = postgres_database()
        pg_data = os.path.join(work, "pg-data")
        try:
            pg_token = subprocess.run([LLMTOOL, "token", "create", "bench", "--role", "editor", "--db", database],
                                      env={**env, "LLMTOOL_DATA_DIR": pg_data}, capture_output=True, text=True, check=True).stdout.strip()
            pg_server, pg_api = serve(pg_data, env, database)
            try:
                rate = publish_all(pg_api, pg_token, corpus, files)
                print(f"publishing {len(files)} tools one by one (PostgreSQL): {rate:.0f} publishes/s")
                rate, _, p99 = wrk(f"{pg_api}/tools/{SLUG}")
                print(f"GET /tools/{{slug}} on PostgreSQL: {rate:.0f} req/s   p99 {p99:.2f} ms")
                search_figures(pg_api, "PostgreSQL", len(files), words)
            finally:
                pg_server.kill()
                pg_server.wait()
        finally:
            subprocess.run([psql, cluster, "-qc", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], capture_output=True)
    finally:
        for process in [server, nginx]:
            if process is not None:
                process.kill()
                process.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
