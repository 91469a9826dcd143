-- People: the organisation's members, each with a role, and teams, whose names are the tags
-- that curate the tools each team sees (a tool tagged `all` reaches everyone).
CREATE TABLE members (
    -- In lower case: an e-mail is one member whatever the case it is written in.
    email TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    -- owner, admin, editor or viewer.
    role TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE teams (
    name TEXT PRIMARY KEY,
    created_at TEXT NOT NULL
);

CREATE TABLE member_teams (
    email TEXT NOT NULL REFERENCES members (email) ON DELETE CASCADE,
    team TEXT NOT NULL REFERENCES teams (name) ON DELETE CASCADE ON UPDATE CASCADE,
    PRIMARY KEY (email, team)
);
CREATE INDEX member_teams_by_team ON member_teams (team, email);

-- Every token belongs to a member, and never has more rights than its member.
ALTER TABLE tokens ADD COLUMN member TEXT;

-- The tokens made before members existed keep working: each gets a member of its own, named
-- after it at the reserved domain `tokens.invalid`, with the token's role (the highest, for
-- names that differ only in case).
INSERT INTO members (email, name, role, created_at)
SELECT lower(name) || '@tokens.invalid', MIN(name),
       CASE MAX(CASE role WHEN 'admin' THEN 3 WHEN 'editor' THEN 2 ELSE 1 END)
           WHEN 3 THEN 'admin' WHEN 2 THEN 'editor' ELSE 'viewer' END,
       MIN(created_at)
FROM tokens GROUP BY lower(name);
UPDATE tokens SET member = lower(name) || '@tokens.invalid';

-- Every token saw every tool so far; with no teams yet, the tools reach everyone.
INSERT INTO tags (tool_id, tag) SELECT id, 'all' FROM tools WHERE true ON CONFLICT DO NOTHING;
