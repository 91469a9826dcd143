#!/usr/bin/env python3
"""The Control Center's spend page over 1,000,000 logged runs, on SQLite and on PostgreSQL
(run by bench/spend.sh).

usage: bench/spend.py [RUNS=1000000] [REQUESTS=30]

A library is filled with RUNS runs over the 90 days up to today (20 teams, 400 members each
in one team, 200 tools, 8 models; each member keeps to 5 tools and 2 models, as people do),
written straight into its `runs` table, and totalled by day into `spend_daily` with the very
statement migration 0008 uses, and into its coarser tables (what the server keeps up run by
run). Then `llmtool serve`
(release build) answers `GET /api/v1/spend` (this month, the page's default; and the whole
90 days) REQUESTS times each, one after another after three warm-ups: the median, the 99th
percentile (with 30 requests, the slowest but one) and the slowest, in milliseconds, with
each database's query plan of the page's heaviest statement. Then, the same way:
- one team's page for this month (`&team=`), each request another of the 20 teams;
- a tool's run history as an admin reads it (`GET /tools/tool-007/runs?limit=20`, about 5,000
  of the runs are that tool's): its first page, and its 10th (through the `X-Next-Cursor` of
  the pages before).
"""
import datetime, json, os, random, shutil, statistics, subprocess, sys, tempfile, time, urllib.request

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
REQUESTS = int(sys.argv[2]) if len(sys.argv) > 2 else 30
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLMTOOL = os.path.join(ROOT, "target", "release", "llmtool")
TEAMS = [f"team-{n:02}" for n in range(1, 21)]
MODELS = [("openai", "gpt-4o-mini", 0.15, 0.6), ("openai", "gpt-4o", 2.5, 10.0), ("anthropic", "claude-sonnet-4-5", 3.0, 15.0),
          ("anthropic", "claude-haiku-4-5", 1.0, 5.0), ("gemini", "gemini-2.5-flash", 0.3, 2.5), ("gemini", "gemini-2.5-pro", 1.25, 10.0),
          ("groq", "llama-3.3-70b-versatile", 0.59, 0.79), ("mistral", "mistral-large-latest", 2.0, 6.0)]
HEAVIEST = ("SELECT day, team, SUM(runs)::bigint, SUM(input_tokens)::bigint, SUM(output_tokens)::bigint, SUM(cost_usd) "
            "FROM spend_team_daily WHERE day >= '{from_}' AND day < '{to}' GROUP BY day, team ORDER BY day, team")


def rows(today):
    """The runs: (started_at, slug, provider, model, input, output, cost, member, team)."""
    rng = random.Random(7)
    members = []
    for n in range(400):
        email = f"member-{n:03}@example.org"
        members.append((email, TEAMS[n % len(TEAMS)], rng.sample(range(200), 5), rng.sample(range(len(MODELS)), 2)))
    start = today - datetime.timedelta(days=89)
    for _ in range(RUNS):
        email, team, tools, models = rng.choice(members)
        provider, model, price_in, price_out = MODELS[rng.choice(models)]
        day = start + datetime.timedelta(days=rng.randrange(90))
        at = f"{day.isoformat()}T{rng.randrange(24):02}:{rng.randrange(60):02}:{rng.randrange(60):02}.000Z"
        tokens_in, tokens_out = rng.randrange(200, 4000), rng.randrange(50, 1500)
        cost = (tokens_in * price_in + tokens_out * price_out) / 1e6
        yield at, f"tool-{rng.choice(tools):03}", provider, model, tokens_in, tokens_out, cost, email, team


def record(at, slug, provider, model, tokens_in, tokens_out, cost):
    """A run's record as the server keeps it (what the history shows of it)."""
    return json.dumps({"started_at": at, "origin": "server", "tool_name": slug, "tool_hash": "0" * 64,
                       "variables_hash": "0" * 64, "provider": provider, "model": model, "input_tokens": tokens_in,
                       "output_tokens": tokens_out, "cost_usd": cost, "latency_ms": 900, "repairs": 0, "outcome": "ok"},
                      separators=(",", ":"))


COARSE = [
    ("spend_team_daily", "day, team, model"),
    ("spend_tool_daily", "day, slug"),
    ("spend_member_daily", "day, member"),
]
REFILL = [f"DELETE FROM {table}" for table, _ in COARSE] + [
    f"INSERT INTO {table} SELECT {keys}, SUM(runs), SUM(input_tokens), SUM(output_tokens), SUM(cost_usd) FROM spend_daily GROUP BY {keys}"
    for table, keys in COARSE]
ROLLUP = ("INSERT INTO spend_daily SELECT substr(started_at, 1, 10), team, member, slug, provider || '/' || model, COUNT(*), "
          "SUM(COALESCE(input_tokens, 0)), SUM(COALESCE(output_tokens, 0)), SUM(COALESCE(cost_usd, 0)) FROM runs "
          "GROUP BY substr(started_at, 1, 10), team, member, slug, provider || '/' || model")


def fill_sqlite(path, today):
    import sqlite3
    db = sqlite3.connect(path)
    db.executemany("INSERT INTO teams (name, created_at) VALUES (?, '2026-01-01T00:00:00.000Z') ON CONFLICT DO NOTHING", [(t,) for t in TEAMS])
    db.executemany(
        "INSERT INTO runs (started_at, origin, slug, version, run_by, provider, model, input_tokens, output_tokens, cost_usd, outcome, record, member, team) "
        "VALUES (?, 'server', ?, 1, NULL, ?, ?, ?, ?, ?, 'ok', ?, ?, ?)",
        ((at, slug, provider, model, i, o, c, record(at, slug, provider, model, i, o, c), member, team)
         for at, slug, provider, model, i, o, c, member, team in rows(today)))
    db.execute("DELETE FROM spend_daily")
    db.execute(ROLLUP)
    for statement in REFILL:
        db.execute(statement)
    db.commit()
    count = db.execute("SELECT COUNT(*) FROM spend_daily").fetchone()[0]
    db.execute("ANALYZE")
    db.commit()
    db.close()
    return count


def fill_postgres(url, psql, today):
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as out:
        for at, slug, provider, model, i, o, c, member, team in rows(today):
            kept = record(at, slug, provider, model, i, o, c).replace(chr(34), chr(34) * 2)
            out.write(f"{at},server,{slug},1,{provider},{model},{i},{o},{c},ok,\"{kept}\",{member},{team}\n")
    copy = (f"\\copy runs (started_at, origin, slug, version, provider, model, input_tokens, output_tokens, cost_usd, outcome, record, member, team) "
            f"FROM '{out.name}' WITH (FORMAT csv)")
    subprocess.run([psql, url, "-qc", copy], check=True)
    os.unlink(out.name)
    teams = ", ".join(f"('{t}', '2026-01-01T00:00:00.000Z')" for t in TEAMS)
    subprocess.run([psql, url, "-qc", f"INSERT INTO teams (name, created_at) VALUES {teams} ON CONFLICT DO NOTHING"], check=True)
    subprocess.run([psql, url, "-qc", "DELETE FROM spend_daily"], check=True)
    subprocess.run([psql, url, "-qc", ROLLUP], check=True)
    for statement in REFILL:
        subprocess.run([psql, url, "-qc", statement], check=True)
    subprocess.run([psql, url, "-qc", "VACUUM ANALYZE"], check=True)
    out = subprocess.run([psql, url, "-tAc", "SELECT COUNT(*) FROM spend_daily"], capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def serve(data, database):
    env = {**os.environ, "LLMTOOL_DATA_DIR": data, "LLMTOOL_NO_LOG": "1"}
    server = subprocess.Popen([LLMTOOL, "serve", "--listen", "127.0.0.1:0", "--rate-limit", "0", "--db", database],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in server.stderr:
        if line.startswith("llmtool serve: http://"):
            return server, line.split()[2]
    sys.exit("llmtool serve did not start")


def get(api, token, path):
    """(milliseconds, the JSON answer, its headers) of `GET path`."""
    request = urllib.request.Request(f"{api}{path}", headers={"Authorization": f"Bearer {token}"})
    started = time.perf_counter()
    with urllib.request.urlopen(request) as answer:
        body = answer.read()
        elapsed = (time.perf_counter() - started) * 1000
        return elapsed, json.loads(body), answer.headers


def timed(api, token, query):
    """Milliseconds of each of REQUESTS answers to `GET /spend?query`, after three warm-ups;
    `query` may be a function of the request's number."""
    path = (lambda n: f"/spend?{query(n)}") if callable(query) else (lambda n: f"/spend?{query}")
    return timed_paths(api, token, path)


def timed_paths(api, token, path):
    """(p50, p99, slowest, last answer) of REQUESTS requests of `path(n)`, after three warm-ups."""
    for n in range(3):
        get(api, token, path(n))
    times, report = [], None
    for n in range(REQUESTS):
        elapsed, report, _ = get(api, token, path(n))
        times.append(elapsed)
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99) - 1)] if len(times) >= 2 else times[0]
    return statistics.median(times), p99, times[-1], report


def publish_history_tool(api, token):
    """Publishes `tool-007`, whose runs the history pages (the runs were written without it)."""
    tool = {"model_prompt": "Summarize {{text}}.", "metadata": {"prompt_name": "Tool 7", "timestamp": "2026-11-01T00:00:00Z",
            "variables": [{"name": "text", "type": "text", "description": "What to summarize."}]}}
    request = urllib.request.Request(f"{api}/tools?slug=tool-007", data=json.dumps(tool).encode(), method="POST",
                                     headers={"Authorization": f"Bearer {token}"})
    urllib.request.urlopen(request).read()


def measure(name, database, data, token, today, plan):
    server, api = serve(data, database)
    try:
        month = f"from={today.replace(day=1).isoformat()}&to={today.isoformat()}"
        whole = f"from={(today - datetime.timedelta(days=89)).isoformat()}&to={today.isoformat()}"
        for label, query in (("this month", month), ("90 days", whole)):
            p50, p99, worst, report = timed(api, token, query)
            runs = report["totals"]["runs"]
            print(f"{name:10} {label:10} {runs:>9} runs  p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  slowest {worst:7.1f} ms")
        p50, p99, worst, report = timed(api, token, lambda n: f"{month}&team={TEAMS[n % len(TEAMS)]}")
        print(f"{name:10} {'one team':10} {report['totals']['runs']:>9} runs  p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  slowest {worst:7.1f} ms"
              "  (this month, each request another team)")
        publish_history_tool(api, token)
        cursor = None
        for _ in range(9):
            _, page, headers = get(api, token, f"/tools/tool-007/runs?limit=20" + (f"&before={cursor}" if cursor else ""))
            cursor = headers["X-Next-Cursor"]
        for label, path in (("history, first page", "/tools/tool-007/runs?limit=20"),
                            ("history, 10th page", f"/tools/tool-007/runs?limit=20&before={cursor}")):
            p50, p99, worst, page = timed_paths(api, token, lambda n, path=path: path)
            print(f"{name:10} {label:20} {len(page):>3} runs  p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  slowest {worst:7.1f} ms")
    finally:
        server.terminate()
        server.wait()
    print(plan)


def main():
    if not os.path.exists(LLMTOOL):
        sys.exit("build it first: cargo build --release")
    today = datetime.datetime.now(datetime.timezone.utc).date()
    heaviest = HEAVIEST.format(from_=(today - datetime.timedelta(days=89)).isoformat(), to=(today + datetime.timedelta(days=1)).isoformat())
    work = tempfile.mkdtemp(prefix="llmtool-spend-bench-")
    try:
        env = {**os.environ, "LLMTOOL_DATA_DIR": work}
        token = subprocess.run([LLMTOOL, "token", "create", "bench", "--role", "admin"], env=env,
                               capture_output=True, text=True, check=True).stdout.strip()
        path = os.path.join(work, "library.db")
        started = time.perf_counter()
        lines = fill_sqlite(path, today)
        print(f"SQLite: {RUNS} runs, {lines} day lines, filled in {time.perf_counter() - started:.0f} s")
        import sqlite3
        db = sqlite3.connect(path)
        plan = "\n".join("  " + " ".join(map(str, row[3:])) for row in db.execute("EXPLAIN QUERY PLAN " + heaviest.replace("::bigint", "")))
        db.close()
        measure("SQLite", path, work, token, today, "SQLite's plan of the by-day-and-team total:\n" + plan)

        pg = subprocess.run([os.path.join(ROOT, "scripts", "postgres.sh"), "start"], capture_output=True, text=True, check=True)
        server_url = pg.stdout.strip().split("=", 1)[1]
        psql = shutil.which("psql") or sorted(__import__("glob").glob("/usr/lib/postgresql/*/bin/psql"))[-1]
        name = f"llmtool_spend_{os.getpid()}"
        subprocess.run([psql, server_url, "-qc", f"CREATE DATABASE {name}"], check=True, capture_output=True)
        url = server_url.rsplit("/", 1)[0] + "/" + name
        try:
            pg_data = os.path.join(work, "pg")
            os.makedirs(pg_data)
            env = {**os.environ, "LLMTOOL_DATA_DIR": pg_data}
            pg_token = subprocess.run([LLMTOOL, "token", "create", "bench", "--role", "admin", "--db", url], env=env,
                                      capture_output=True, text=True, check=True).stdout.strip()
            started = time.perf_counter()
            lines = fill_postgres(url, psql, today)
            print(f"PostgreSQL: {RUNS} runs, {lines} day lines, filled in {time.perf_counter() - started:.0f} s")
            plan = subprocess.run([psql, url, "-tAc", "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + heaviest],
                                  capture_output=True, text=True, check=True).stdout
            measure("PostgreSQL", url, pg_data, pg_token, today, "PostgreSQL's plan of the by-day-and-team total:\n" + "\n".join("  " + l for l in plan.splitlines()))
        finally:
            subprocess.run([psql, server_url, "-qc", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], capture_output=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
