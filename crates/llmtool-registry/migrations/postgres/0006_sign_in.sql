-- Signing in without a token: sessions that belong to a member (opened by an invite link or
-- by single sign-on), one-time invites, the single sign-on attempts in flight, and the
-- workspace's settings.

-- A session now belongs to a member, and to a token only when one was pasted to open it.
ALTER TABLE sessions ADD COLUMN member TEXT REFERENCES members (email) ON DELETE CASCADE;
UPDATE sessions s SET member = t.member FROM tokens t WHERE t.name = s.token_name;
DELETE FROM sessions WHERE member IS NULL;
ALTER TABLE sessions ALTER COLUMN member SET NOT NULL;
ALTER TABLE sessions ALTER COLUMN token_name DROP NOT NULL;
DROP INDEX sessions_token;
CREATE INDEX sessions_member ON sessions (member, created_at);
CREATE INDEX sessions_expiry ON sessions (expires_at);

-- An invite: the SHA-256 of the one-time link's secret, for a member, until it expires or
-- is used (a used invite is kept, so that the link says it was used rather than unknown).
CREATE TABLE invites (
    id_hash TEXT PRIMARY KEY,
    member TEXT NOT NULL REFERENCES members (email) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT
);
CREATE INDEX invites_member ON invites (member);
CREATE INDEX invites_expiry ON invites (expires_at);

-- A single sign-on under way: the state sent to the provider (its SHA-256), with the nonce
-- and PKCE verifier that the answer is checked against, and the page to land on. Used once.
CREATE TABLE sign_ins (
    state_hash TEXT PRIMARY KEY,
    nonce TEXT NOT NULL,
    verifier TEXT NOT NULL,
    next TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX sign_ins_expiry ON sign_ins (expires_at);

-- The workspace's settings, by name (`built_ins`: `on` or `off`).
CREATE TABLE settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
