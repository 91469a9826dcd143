-- The Control Center: the providers' integrations (their keys sealed by the server: the
-- database never holds a key in the clear), admins' prices, budgets with the reservations of
-- the runs in flight, and each run's member and team, totalled by day for the spend pages.
CREATE TABLE integrations (
    -- The provider's name as runs use it: a provider llmtool knows (`openai`), or a name of
    -- the admin's for another server of one of the APIs.
    name TEXT PRIMARY KEY,
    -- For a name llmtool does not know: the API it speaks (`openai`, `anthropic`, `gemini`).
    api TEXT,
    base_url TEXT,
    -- `v1.KEY-ID.BASE64`: the key sealed with the server's integration key (AEAD).
    sealed_key TEXT,
    -- The key's last four characters, to tell keys apart.
    key_hint TEXT,
    -- The models runs may use, a JSON array ([] for every model of the provider).
    models TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    -- The last "test": JSON, or NULL.
    last_test TEXT
);

-- Which models of an integration a team may use (a JSON array; [] for all of the
-- integration's). An integration with no rows here is open to every team.
CREATE TABLE integration_teams (
    integration TEXT NOT NULL REFERENCES integrations (name) ON DELETE CASCADE,
    team TEXT NOT NULL,
    models TEXT NOT NULL,
    PRIMARY KEY (integration, team)
);

-- Admins' prices over the shipped table, in US dollars per million tokens, by
-- `provider/model`; `*` holds a markup for every model.
CREATE TABLE prices (
    model TEXT PRIMARY KEY,
    input REAL,
    cached_input REAL,
    output REAL,
    batch_input REAL,
    batch_output REAL,
    markup_percent REAL,
    note TEXT,
    updated_at TEXT NOT NULL
);

-- Spend limits of a team or a member over a day, a week or a calendar month (UTC).
CREATE TABLE budgets (
    scope TEXT NOT NULL,
    name TEXT NOT NULL,
    period TEXT NOT NULL,
    limit_usd REAL NOT NULL,
    -- The share of the limit past which runs come with a warning.
    warn_at REAL NOT NULL,
    -- Whether a run that would pass the limit is refused.
    hard INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (scope, name)
);

-- The runs in flight: each holds its worst-case cost against its member's and team's budgets
-- until it is kept (or its time is up, should the server stop meanwhile).
CREATE TABLE reservations (
    id INTEGER PRIMARY KEY,
    member TEXT NOT NULL,
    team TEXT NOT NULL,
    amount REAL NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX reservations_by_member ON reservations (member);
CREATE INDEX reservations_by_team ON reservations (team);

-- Whom each run is charged to ('' for none).
ALTER TABLE runs ADD COLUMN member TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN team TEXT NOT NULL DEFAULT '';
-- A token's runs are its member's; a studio session's were kept under the member's e-mail.
UPDATE runs SET member = COALESCE((SELECT t.member FROM tokens t WHERE t.name = runs.run_by),
    (SELECT m.email FROM members m WHERE m.email = runs.run_by), '');

-- The runs totalled by day, team, member, tool and model: what the spend pages and the
-- budgets read, kept with each run in its transaction.
CREATE TABLE spend_daily (
    day TEXT NOT NULL,
    team TEXT NOT NULL,
    member TEXT NOT NULL,
    slug TEXT NOT NULL,
    model TEXT NOT NULL,
    runs INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    PRIMARY KEY (day, team, member, slug, model)
);
CREATE INDEX spend_by_team ON spend_daily (team, day);
CREATE INDEX spend_by_member ON spend_daily (member, day);
INSERT INTO spend_daily
SELECT substr(started_at, 1, 10), team, member, slug, provider || '/' || model, COUNT(*),
       SUM(COALESCE(input_tokens, 0)), SUM(COALESCE(output_tokens, 0)), SUM(COALESCE(cost_usd, 0))
FROM runs GROUP BY substr(started_at, 1, 10), team, member, slug, provider || '/' || model;

-- The same totals, coarser, for the spend page over everyone's runs: by day, team and model;
-- by day and tool; by day and member (each kept with every run, as `spend_daily` is).
CREATE TABLE spend_team_daily (
    day TEXT NOT NULL,
    team TEXT NOT NULL,
    model TEXT NOT NULL,
    runs INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    PRIMARY KEY (day, team, model)
);
INSERT INTO spend_team_daily SELECT day, team, model, SUM(runs), SUM(input_tokens), SUM(output_tokens), SUM(cost_usd)
FROM spend_daily GROUP BY day, team, model;
CREATE TABLE spend_tool_daily (
    day TEXT NOT NULL,
    slug TEXT NOT NULL,
    runs INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    PRIMARY KEY (day, slug)
);
INSERT INTO spend_tool_daily SELECT day, slug, SUM(runs), SUM(input_tokens), SUM(output_tokens), SUM(cost_usd)
FROM spend_daily GROUP BY day, slug;
CREATE TABLE spend_member_daily (
    day TEXT NOT NULL,
    member TEXT NOT NULL,
    runs INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    PRIMARY KEY (day, member)
);
INSERT INTO spend_member_daily SELECT day, member, SUM(runs), SUM(input_tokens), SUM(output_tokens), SUM(cost_usd)
FROM spend_daily GROUP BY day, member;
