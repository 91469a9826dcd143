-- Database and search integrations beside the model ones (`api` postgres, sqlite, searxng,
-- brave or tavily; a database's connection URL sealed as its key): the tools each is
-- assigned to, by slug, as a JSON array. A data integration assigned to no tool serves none.
ALTER TABLE integrations ADD COLUMN tools TEXT NOT NULL DEFAULT '[]';
