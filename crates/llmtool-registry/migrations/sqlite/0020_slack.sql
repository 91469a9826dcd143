-- Slack (docs/slack.md). The events Slack sent, by id, so that each is handled once whichever
-- server a retry reaches (rows older than a day are deleted as new ones come), and the Slack
-- threads that are conversations: a mention of the app in one is a turn of it.
CREATE TABLE slack_events (
    event_id TEXT PRIMARY KEY,
    -- Seconds since 1970 (UTC).
    received_at REAL NOT NULL
);
CREATE INDEX slack_events_received ON slack_events (received_at);

CREATE TABLE slack_threads (
    channel TEXT NOT NULL,
    -- The time stamp of the thread's first message: its id in the channel.
    thread_ts TEXT NOT NULL,
    conversation TEXT NOT NULL,
    PRIMARY KEY (channel, thread_ts)
);
CREATE INDEX slack_threads_conversation ON slack_threads (conversation);
