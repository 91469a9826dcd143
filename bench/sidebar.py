#!/usr/bin/env python3
"""The workspace's sidebar at 10,000 conversations a member, on SQLite and on PostgreSQL (run by
bench/sidebar.sh).

usage: bench/sidebar.py [PER_MEMBER=10000] [MEMBERS=10] [REQUESTS=30]

PostgreSQL is the throwaway cluster of scripts/postgres.sh, a database of its own, filled by one
`INSERT ... SELECT` over `generate_series` from the server's own conversation (each answer two
words of the same vocabulary, picked by the copy's number rather than at random). Skipped with
LLMTOOL_BENCH_NO_POSTGRES=1.

A library gets one real conversation from `llmtool serve` (a run of the built-in
`teach-me-anything` on the mock provider, so every row is the server's own), then, written
straight into its tables while no server runs, PER_MEMBER copies of it for each of MEMBERS
owners: a conversation, its run, and the run's search words (each answer holds two words of a
vocabulary of 1,000, so that a word finds about 0.2% of them). Then `llmtool serve` (release
build) answers, REQUESTS times each after three warm-ups, one after another:
- the sidebar's first page (`GET /api/v1/conversations?mine=true&limit=50`),
- its 100th page (the cursor of the 99th),
- a search (`?q=WORD`, a word of the vocabulary),
with the median, the 99th percentile (of 30, the slowest but one) and the slowest, in ms.

No peer's list could be run here: Open WebUI, the workspace the issue names, brings PyTorch
with it. The comparison is with the library's first design, which listed a member's
conversations by totalling their runs on every call (`JOIN runs ... GROUP BY`, its index
`(owner, id)`), timed on the same file against the statement of the sidebar's shape (the
owner's rows in `conversations_sidebar` order), both through Python's SQLite.
"""
import json, os, random, shutil, sqlite3, statistics, subprocess, sys, tempfile, time, urllib.parse, urllib.request

PER_MEMBER = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
MEMBERS = int(sys.argv[2]) if len(sys.argv) > 2 else 10
REQUESTS = int(sys.argv[3]) if len(sys.argv) > 3 else 30
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("LLMTOOL_BUILD_DIR", os.path.join(ROOT, "target", "release"))
LLMTOOL, MOCK = os.path.join(BIN, "llmtool"), os.path.join(BIN, "mock-llm")
WORDS = [f"w{n:03}x" for n in range(1000)]

FIRST_DESIGN = ("SELECT c.id, c.started_at, MAX(r.started_at), c.owner, c.slug, c.version, c.provider, c.model, COUNT(r.id), "
                "COALESCE(SUM(r.cost_usd), 0.0), (c.share_hash IS NOT NULL), c.dlp, c.placeholders, c.shared_run "
                "FROM conversations c JOIN runs r ON r.conversation = c.id WHERE c.owner = ? GROUP BY c.id "
                "ORDER BY MAX(r.started_at) DESC, c.id DESC LIMIT 50")
SIDEBAR_SHAPE = ("SELECT id, started_at, last_at, title, provider, model, turns, cost_usd, owner, slug, version, "
                 "(share_hash IS NOT NULL), archived FROM conversations WHERE owner = ? AND archived = 0 "
                 "ORDER BY last_at DESC, id DESC LIMIT 50")


def start(args, env, pattern):
    child = subprocess.Popen(args, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stream = child.stdout if pattern == "stdout" else child.stderr
    for line in stream:
        if "http://" in line:
            return child, line.strip().split()[-1] if pattern == "stdout" else line.split()[2]
    sys.exit(f"{args[0]} did not start")


def call(api, token, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{api}{path}", data=data, headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request) as answer:
        return answer.read().decode(), answer.headers


def cli(data, *args):
    return subprocess.run([LLMTOOL, *args], env={**os.environ, "LLMTOOL_DATA_DIR": data}, capture_output=True, text=True, check=True).stdout.strip()


def copies(db, owners):
    """Fills the library with PER_MEMBER copies of its one conversation for each owner."""
    columns = [row[1] for row in db.execute("PRAGMA table_info(conversations)")]
    run_columns = [row[1] for row in db.execute("PRAGMA table_info(runs)") if row[1] != "id"]
    (conversation,) = db.execute(f"SELECT {', '.join(columns)} FROM conversations").fetchall()
    (run,) = db.execute(f"SELECT {', '.join(run_columns)} FROM runs").fetchall()
    template = dict(zip(columns, conversation))
    run_template = dict(zip(run_columns, run))
    record = json.loads(run_template["record"])
    rng = random.Random(7)
    put_conversation = f"INSERT INTO conversations ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    put_run = f"INSERT INTO runs ({', '.join(run_columns)}) VALUES ({', '.join('?' * len(run_columns))})"
    n = 0
    for owner in owners:
        for _ in range(PER_MEMBER):
            n += 1
            at = f"2026-{1 + n % 11:02}-{1 + n % 28:02}T{n % 24:02}:{n % 60:02}:{n % 59:02}.{n % 1000:03}Z"
            cid = f"01jqbench{n:017d}"
            words = f"{rng.choice(WORDS)} {rng.choice(WORDS)}"
            db.execute(put_conversation, [{**template, "id": cid, "owner": owner, "started_at": at, "last_at": at,
                                           "title": f"Teach Me Anything: topic {n}", "share_hash": None,
                                           "collab_hash": None}.get(c) for c in columns])
            answer = f"{record.get('answer', '')} {words}"
            db.execute(put_run, [{**run_template, "conversation": cid, "started_at": at,
                                  "record": json.dumps({**record, "answer": answer, "conversation": cid})}.get(c) for c in run_columns])
            run_id = db.execute("SELECT last_insert_rowid()").fetchone()[0]
            db.execute("INSERT INTO search_turns (rowid, conversation, words) VALUES (?, ?, ?)", (run_id, cid, f"{record.get('prompt', '')}\n{answer}"))
    db.commit()
    db.execute("ANALYZE")
    db.commit()


def timed(once):
    for _ in range(3):
        once()
    times = []
    for _ in range(REQUESTS):
        started = time.perf_counter()
        once()
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[-2] if len(times) > 1 else times[0], times[-1]


def sidebar(store, api, token):
    """Times the sidebar's first page, its 100th and a search."""
    first = lambda: call(api, token, "/conversations?mine=true&limit=50")
    body, headers = first()
    assert len(json.loads(body)) == 50, body[:200]
    cursor = headers["x-next-cursor"]
    page = min(100, PER_MEMBER // 50)
    for _ in range(page - 2):
        _, headers = call(api, token, f"/conversations?mine=true&limit=50&cursor={urllib.parse.quote(cursor)}")
        cursor = headers["x-next-cursor"]
    deep = lambda: call(api, token, f"/conversations?mine=true&limit=50&cursor={urllib.parse.quote(cursor)}")
    word = WORDS[500]
    found = len(json.loads(call(api, token, f"/conversations?mine=true&limit=50&q={word}")[0]))
    search = lambda: call(api, token, f"/conversations?mine=true&limit=50&q={word}")
    for name, once in (("first page", first), (f"page {page}", deep), (f"search ({found} found)", search)):
        p50, p99, worst = timed(once)
        print(f"{store:10} {name:20} p50 {p50:7.2f} ms  p99 {p99:7.2f} ms  slowest {worst:7.2f} ms")


def served(store, serve, env, token):
    """Starts `llmtool serve` on the filled library and times the sidebar through it."""
    server, api = start(serve, env, "stderr")
    try:
        sidebar(store, api, token)
    finally:
        server.terminate()
        server.wait()


def on_postgres(work, config):
    """The same library on PostgreSQL: one conversation through the server, its copies made by
    the database itself, then the same requests."""
    import glob, shutil
    pg = subprocess.run([os.path.join(ROOT, "scripts", "postgres.sh"), "start"], capture_output=True, text=True, check=True)
    server_url = pg.stdout.strip().split("=", 1)[1]
    psql = shutil.which("psql") or sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))[-1]
    name = f"llmtool_sidebar_{os.getpid()}"
    subprocess.run([psql, server_url, "-qc", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    url = server_url.rsplit("/", 1)[0] + "/" + name
    def sql(statement):
        done = subprocess.run([psql, url, "-qtAc", statement], capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"PostgreSQL refused {statement[:120]}...: {done.stderr.strip()}")
        return done.stdout.strip()
    try:
        data = os.path.join(work, "pg")
        os.makedirs(data)
        token = cli(data, "token", "create", "vic", "--role", "viewer", "--db", url)
        env = {"LLMTOOL_DATA_DIR": data, "LLMTOOL_NO_LOG": "1", "MOCK_KEY": "mock-secret-key-5150"}
        serve = [LLMTOOL, "serve", "--listen", "127.0.0.1:0", "--rate-limit", "0", "--config", config, "--db", url]
        server, api = start(serve, env, "stderr")
        call(api, token, "/tools/teach-me-anything/run", {"values": {"topic": "tides"}, "model": "mock/m"})
        server.terminate()
        server.wait()
        template = sql("SELECT id FROM conversations")
        columns = sql("SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM information_schema.columns "
                      "WHERE table_name = 'conversations'").split(",")
        run_columns = [c for c in sql("SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM information_schema.columns "
                                      "WHERE table_name = 'runs'").split(",") if c != "id"]
        # The copy's number n, its time, its id, its owner (the member first) and its two words.
        at = ("format('2026-%s-%sT%s:%s:%s.%sZ', lpad((1 + n % 11)::text, 2, '0'), lpad((1 + n % 28)::text, 2, '0'), "
              "lpad((n % 24)::text, 2, '0'), lpad((n % 60)::text, 2, '0'), lpad((n % 59)::text, 2, '0'), lpad((n % 1000)::text, 3, '0'))")
        cid = "'01jqbench' || lpad(n::text, 17, '0')"
        owner = f"CASE WHEN n <= {PER_MEMBER} THEN t.owner ELSE 'member:bench-' || ((n - 1) / {PER_MEMBER}) END"
        words = "'w' || lpad(((n::bigint * 7919) % 1000)::text, 3, '0') || 'x w' || lpad(((n::bigint * 104729 + 17) % 1000)::text, 3, '0') || 'x'"
        changed = {"id": cid, "owner": owner, "started_at": at, "last_at": at, "title": "'Teach Me Anything: topic ' || n",
                   "share_hash": "NULL", "collab_hash": "NULL"}
        total = MEMBERS * PER_MEMBER
        started = time.perf_counter()
        sql(f"INSERT INTO conversations ({', '.join(columns)}) SELECT {', '.join(changed.get(c, 't.' + c) for c in columns)} "
            f"FROM conversations t, generate_series(1, {total}) n WHERE t.id = '{template}'")
        run_changed = {"conversation": cid, "started_at": at,
                       "record": f"jsonb_set(jsonb_set(r.record, '{{conversation}}', to_jsonb({cid})), '{{answer}}', "
                                 f"to_jsonb(coalesce(r.record->>'answer', '') || ' ' || {words}))",
                       "words": f"strip(to_tsvector('simple', coalesce(r.record->>'prompt', '') || chr(10) || "
                                f"coalesce(r.record->>'answer', '') || ' ' || {words}))"}
        sql(f"INSERT INTO runs ({', '.join(run_columns)}) SELECT {', '.join(run_changed.get(c, 'r.' + c) for c in run_columns)} "
            f"FROM runs r, generate_series(1, {total}) n WHERE r.conversation = '{template}'")
        sql(f"DELETE FROM runs WHERE conversation = '{template}'")
        sql(f"DELETE FROM conversations WHERE id = '{template}'")
        sql("VACUUM ANALYZE")
        print(f"PostgreSQL: {total} conversations ({PER_MEMBER} for the member) written in {time.perf_counter() - started:.0f} s")
        served("PostgreSQL", serve, env, token)
    finally:
        subprocess.run([psql, server_url, "-qc", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], capture_output=True)


def main():
    for program in (LLMTOOL, MOCK):
        if not os.access(program, os.X_OK):
            sys.exit(f"{program} is missing: cargo build --release --bins")
    work = tempfile.mkdtemp(prefix="llmtool-sidebar-bench-")
    data = os.path.join(work, "data")
    mock, mock_url = start([MOCK, "127.0.0.1:0"], {"MOCK_LLM_ANSWER": "The Moon pulls the sea."}, "stdout")
    try:
        config = os.path.join(work, "config.toml")
        with open(config, "w") as out:
            out.write(f'[providers.mock]\napi = "openai"\nbase_url = "{mock_url}/v1"\napi_key_env = "MOCK_KEY"\n\n'
                      '[prices."mock/m"]\ninput = 1.0\noutput = 2.0\n')
        token = cli(data, "token", "create", "vic", "--role", "viewer")
        env = {"LLMTOOL_DATA_DIR": data, "LLMTOOL_NO_LOG": "1", "MOCK_KEY": "mock-secret-key-5150"}
        serve = [LLMTOOL, "serve", "--listen", "127.0.0.1:0", "--rate-limit", "0", "--config", config]
        server, api = start(serve, env, "stderr")
        call(api, token, "/tools/teach-me-anything/run", {"values": {"topic": "tides"}, "model": "mock/m"})
        server.terminate()
        server.wait()
        database = os.path.join(data, "library.db")
        db = sqlite3.connect(database)
        (owner,) = db.execute("SELECT owner FROM conversations").fetchone()
        db.execute("DELETE FROM search_turns")
        db.commit()
        started = time.perf_counter()
        copies(db, [owner] + [f"member:bench-{n}" for n in range(1, MEMBERS)])
        db.execute("DELETE FROM runs WHERE conversation NOT LIKE '01jqbench%'")
        db.execute("DELETE FROM conversations WHERE id NOT LIKE '01jqbench%'")
        db.commit()
        print(f"{MEMBERS * PER_MEMBER} conversations ({PER_MEMBER} for the member) written in {time.perf_counter() - started:.0f} s")

        # The first design against the sidebar's shape, on the same file.
        db.execute("CREATE INDEX IF NOT EXISTS conversations_by_owner ON conversations (owner, id)")
        db.execute("CREATE INDEX IF NOT EXISTS runs_by_conversation_only ON runs (conversation)")
        db.commit()
        for name, statement in (("first design", FIRST_DESIGN), ("sidebar shape", SIDEBAR_SHAPE)):
            p50, p99, worst = timed(lambda: db.execute(statement, (owner,)).fetchall())
            plan = " / ".join(row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {statement}", (owner,)))
            print(f"{name:14} p50 {p50:8.2f} ms  p99 {p99:8.2f} ms  slowest {worst:8.2f} ms  plan: {plan}")
        db.execute("DROP INDEX conversations_by_owner")
        db.execute("DROP INDEX runs_by_conversation_only")
        db.commit()
        db.close()

        served("SQLite", serve, env, token)
        if not os.environ.get("LLMTOOL_BENCH_NO_POSTGRES"):
            on_postgres(work, config)
    finally:
        mock.terminate()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
