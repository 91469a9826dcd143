-- Personal tokens: members make, list and revoke their own tokens (the studio's Tokens page,
-- `/api/v1/tokens`), each with an expiry and the time it was last used (written at most once a
-- minute, so that reads stay reads).
ALTER TABLE tokens ADD COLUMN expires_at TEXT;
ALTER TABLE tokens ADD COLUMN last_used_at TEXT;
CREATE INDEX tokens_by_member ON tokens (member, created_at);

-- `llmtool login URL` by the device flow (RFC 8628): the terminal asks for a grant and shows
-- its user code; a signed-in member allows (or denies) it on the studio's `/device` page; the
-- terminal then trades its device code for a new personal token, once. Only the SHA-256 of
-- the device code is kept; the token is made when the terminal collects it, never stored.
CREATE TABLE device_grants (
    device_hash TEXT PRIMARY KEY,
    user_code TEXT NOT NULL UNIQUE,
    -- What the terminal calls itself (its host name), shown to the member who is asked.
    client TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    -- `waiting`, then `allowed` or `denied`.
    state TEXT NOT NULL DEFAULT 'waiting',
    -- The member who answered (their e-mail).
    answered_by TEXT
);
CREATE INDEX device_grants_by_expiry ON device_grants (expires_at);
