-- The functions a run's model called (fetch_url, query_database, another tool, an MCP
-- server's function), in order, as a JSON list of {name, arguments, result, failed, ms}:
-- NULL when it called none.
ALTER TABLE runs ADD COLUMN calls TEXT;
