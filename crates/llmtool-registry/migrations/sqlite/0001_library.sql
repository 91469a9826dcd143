-- The tool library: tools, their immutable versions, tags, labels, search, and API tokens.
CREATE TABLE tools (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    -- The number of the newest version.
    latest INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    -- Set when the tool is deleted (hidden, not erased).
    deleted_at TEXT
);

CREATE TABLE versions (
    tool_id INTEGER NOT NULL REFERENCES tools (id),
    number INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    -- The tool file in canonical form.
    body TEXT NOT NULL,
    name TEXT,
    description TEXT,
    usage_notes TEXT,
    prompt TEXT NOT NULL,
    -- The variables' types, each between spaces: ' single-select text '.
    variable_types TEXT NOT NULL,
    output_type TEXT,
    -- The model names, a JSON array.
    models TEXT NOT NULL,
    note TEXT,
    published_at TEXT NOT NULL,
    published_by TEXT,
    PRIMARY KEY (tool_id, number)
);

CREATE TABLE tags (
    tool_id INTEGER NOT NULL REFERENCES tools (id),
    tag TEXT NOT NULL,
    PRIMARY KEY (tool_id, tag)
);
CREATE INDEX tags_by_tag ON tags (tag, tool_id);

CREATE TABLE labels (
    tool_id INTEGER NOT NULL REFERENCES tools (id),
    label TEXT NOT NULL,
    number INTEGER NOT NULL,
    PRIMARY KEY (tool_id, label)
);

CREATE TABLE tokens (
    name TEXT PRIMARY KEY,
    role TEXT NOT NULL,
    -- SHA-256 of the token; the token itself is shown once and not kept.
    token_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);

-- Full text over each tool's latest version; its rowid is the tool's id.
CREATE VIRTUAL TABLE search USING fts5 (
    name, description, usage_notes, prompt,
    tokenize = 'unicode61 remove_diacritics 2'
);
