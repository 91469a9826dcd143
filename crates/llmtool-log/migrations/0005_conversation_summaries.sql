-- Each conversation keeps its own summary, which the lists read without totalling its runs:
-- a title (the tool's name and first value until renamed), when its last turn started, how
-- many turns it has and what they cost (US dollars, over the turns whose cost is known).
ALTER TABLE conversations ADD COLUMN title TEXT NOT NULL DEFAULT '';
ALTER TABLE conversations ADD COLUMN last_at TEXT NOT NULL DEFAULT '';
ALTER TABLE conversations ADD COLUMN turns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;

UPDATE conversations SET
    title = COALESCE(tool_name, tool_path, ''),
    last_at = COALESCE((SELECT MAX(r.started_at) FROM runs r WHERE r.conversation = conversations.id),
                       started_at),
    turns = (SELECT COUNT(*) FROM runs r WHERE r.conversation = conversations.id),
    cost_usd = (SELECT COALESCE(SUM(r.cost_usd), 0.0) FROM runs r WHERE r.conversation = conversations.id);

CREATE INDEX conversations_newest_first ON conversations (last_at DESC, id DESC);
