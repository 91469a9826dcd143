-- The prompt as it was sent (keys and the values data-loss prevention hid already masked), for
-- `llmtool logs show`; NULL when only the values' hash is kept, or for runs logged before.
ALTER TABLE runs ADD COLUMN prompt TEXT;
