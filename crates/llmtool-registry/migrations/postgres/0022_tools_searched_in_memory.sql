-- A word search of the tools is answered by the server's own index, built from the versions
-- and kept in step with every change (src/search_index.rs): the tsvector that answered it
-- before is no longer read, and no longer written at each publish.
DROP INDEX tools_search;
ALTER TABLE tools DROP COLUMN search;
