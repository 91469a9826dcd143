-- A word search of the tools is answered by the server's own index, built from the versions
-- and kept in step with every change (src/search_index.rs): the FTS5 table that answered it
-- before is no longer read, and no longer written at each publish.
DROP TABLE search;
