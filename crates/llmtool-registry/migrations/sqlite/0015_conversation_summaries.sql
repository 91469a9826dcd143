-- Each conversation keeps its own summary, which the lists read without totalling its runs
-- (as the run log's conversations do): a title (the tool and its first value until renamed),
-- when its last turn started, how many turns it has and what they cost (US dollars, over the
-- turns whose cost is known); and whether its owner archived it. Each turn is found by the
-- words of its prompt as sent and its answer as kept (placeholders, never hidden values).
ALTER TABLE conversations ADD COLUMN title TEXT NOT NULL DEFAULT '';
ALTER TABLE conversations ADD COLUMN last_at TEXT NOT NULL DEFAULT '';
ALTER TABLE conversations ADD COLUMN turns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;

UPDATE conversations SET
    title = slug,
    last_at = COALESCE((SELECT MAX(r.started_at) FROM runs r WHERE r.conversation = conversations.id),
                       started_at),
    turns = (SELECT COUNT(*) FROM runs r WHERE r.conversation = conversations.id),
    cost_usd = (SELECT COALESCE(SUM(r.cost_usd), 0) FROM runs r WHERE r.conversation = conversations.id);

CREATE INDEX conversations_newest_first ON conversations (last_at DESC, id DESC);
-- A member's sidebar: their conversations, archived or not, newest last turn first.
CREATE INDEX conversations_sidebar ON conversations (owner, archived, last_at DESC, id DESC);
DROP INDEX conversations_by_owner;

-- Named `search...`, as the tools' index is: a copy between backends rebuilds it.
CREATE VIRTUAL TABLE search_turns USING fts5(conversation UNINDEXED, words);
INSERT INTO search_turns (rowid, conversation, words)
    SELECT id, conversation, substr(concat_ws(char(10), json_extract(record, '$.prompt'),
            json_extract(record, '$.answer')), 1, 32768)
      FROM runs WHERE conversation IS NOT NULL;
