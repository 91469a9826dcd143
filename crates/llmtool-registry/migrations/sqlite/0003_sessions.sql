-- The web studio's sign-in sessions: a session cookie stands for a token while it lives.
-- Only the SHA-256 of the cookie's value is kept, with the CSRF token the page must send
-- back on every write. A revoked token ends its sessions (they are looked up through it).
CREATE TABLE sessions (
    id_hash TEXT PRIMARY KEY,
    token_name TEXT NOT NULL REFERENCES tokens (name),
    csrf TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX sessions_token ON sessions (token_name, created_at);
