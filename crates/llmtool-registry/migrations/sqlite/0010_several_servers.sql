-- What several servers of one library share besides the library itself: the rate limits'
-- buckets (each a token's, or a client address's) and the follow-ups under way, one a
-- conversation at a time. Times are seconds since 1970 (UTC), so both backends keep them
-- alike. Rows are short-lived: idle buckets and ended leases are deleted as they are met.
CREATE TABLE rate_limits (
    key TEXT PRIMARY KEY,
    -- Requests left in the bucket when it was last used (below zero: a debt).
    tokens REAL NOT NULL,
    seen REAL NOT NULL,
    -- Whether its last request was let through (1) or refused (0).
    granted INTEGER NOT NULL DEFAULT 1
);

CREATE TABLE follow_ups (
    conversation TEXT PRIMARY KEY,
    -- Until when the follow-up holds the conversation, should its server die mid-run.
    lease_until REAL NOT NULL
);
