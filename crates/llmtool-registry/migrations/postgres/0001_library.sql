-- The tool library: tools, their immutable versions, tags, labels, search, and API tokens.
CREATE TABLE tools (
    id BIGSERIAL PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    -- The number of the newest version.
    latest BIGINT NOT NULL,
    created_at TEXT NOT NULL,
    -- Set when the tool is deleted (hidden, not erased).
    deleted_at TEXT,
    -- Full text over the latest version: name, description, usage notes and prompt.
    search TSVECTOR NOT NULL DEFAULT ''::tsvector
);
CREATE INDEX tools_search ON tools USING GIN (search);

CREATE TABLE versions (
    tool_id BIGINT NOT NULL REFERENCES tools (id),
    number BIGINT NOT NULL,
    content_hash TEXT NOT NULL,
    -- The tool file in canonical form.
    body TEXT NOT NULL,
    name TEXT,
    description TEXT,
    usage_notes TEXT,
    prompt TEXT NOT NULL,
    variable_types TEXT[] NOT NULL,
    output_type TEXT,
    models TEXT[] NOT NULL,
    note TEXT,
    published_at TEXT NOT NULL,
    published_by TEXT,
    PRIMARY KEY (tool_id, number)
);

CREATE TABLE tags (
    tool_id BIGINT NOT NULL REFERENCES tools (id),
    tag TEXT NOT NULL,
    PRIMARY KEY (tool_id, tag)
);
CREATE INDEX tags_by_tag ON tags (tag, tool_id);

CREATE TABLE labels (
    tool_id BIGINT NOT NULL REFERENCES tools (id),
    label TEXT NOT NULL,
    number BIGINT NOT NULL,
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
