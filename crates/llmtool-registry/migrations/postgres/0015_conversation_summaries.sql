-- Each conversation keeps its own summary, which the lists read without totalling its runs
-- (as the run log's conversations do): a title (the tool and its first value until renamed),
-- when its last turn started, how many turns it has and what they cost (US dollars, over the
-- turns whose cost is known).
ALTER TABLE conversations ADD COLUMN title TEXT NOT NULL DEFAULT '';
ALTER TABLE conversations ADD COLUMN last_at TEXT NOT NULL DEFAULT '';
ALTER TABLE conversations ADD COLUMN turns BIGINT NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0;

UPDATE conversations SET
    title = slug,
    last_at = COALESCE((SELECT MAX(r.started_at) FROM runs r WHERE r.conversation = conversations.id),
                       started_at),
    turns = (SELECT COUNT(*) FROM runs r WHERE r.conversation = conversations.id),
    cost_usd = (SELECT COALESCE(SUM(r.cost_usd), 0) FROM runs r WHERE r.conversation = conversations.id);

CREATE INDEX conversations_newest_first ON conversations (last_at DESC, id DESC);
CREATE INDEX conversations_by_owner_newest_first ON conversations (owner, last_at DESC, id DESC);
DROP INDEX conversations_by_owner;
