-- Collaboration: its owner opens a conversation to the members who join by its link (whose
-- token is kept as its SHA-256 while collaboration is on), and they read and add turns.
-- Turning it off forgets the link and every collaborator.
ALTER TABLE conversations ADD COLUMN collab_hash TEXT;
CREATE UNIQUE INDEX conversations_by_collab ON conversations (collab_hash);

CREATE TABLE collaborators (
    conversation TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    -- The member's stable id (`members.id`): one removed and added again is someone new.
    member_id TEXT NOT NULL,
    joined_at TEXT NOT NULL,
    PRIMARY KEY (conversation, member_id)
);
CREATE INDEX collaborators_by_member ON collaborators (member_id, conversation);
