-- What a search result shows of a version besides its name and description (its creator's
-- name, whether it has a picture, whether it is a smart tool), kept in columns when it is
-- published, so that a search reads no tool file. Versions already kept are filled in once.
ALTER TABLE versions ADD COLUMN creator TEXT;
ALTER TABLE versions ADD COLUMN has_avatar BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE versions ADD COLUMN smart BOOLEAN NOT NULL DEFAULT false;

UPDATE versions SET
    creator = CASE jsonb_typeof(body::jsonb #> '{metadata,creator}') WHEN 'string'
        THEN body::jsonb #>> '{metadata,creator}' ELSE body::jsonb #>> '{metadata,creator,name}' END,
    has_avatar = (lower(COALESCE(body::jsonb #>> '{metadata,avatar_type}',
            body::jsonb #>> '{metadata,avatar,avatar_type}', '')) = 'base64'
        OR COALESCE(CASE jsonb_typeof(body::jsonb #> '{metadata,avatar}') WHEN 'string'
            THEN body::jsonb #>> '{metadata,avatar}' END,
            body::jsonb #>> '{metadata,avatar,avatar}', '') LIKE 'data:%;base64,%'),
    smart = COALESCE(jsonb_typeof(body::jsonb -> 'tool_code') = 'string'
        OR jsonb_typeof(body::jsonb #> '{metadata,tool_code}') = 'string', false);

-- A search walks the tools in slug order, compared byte by byte as its cursors are, and stops
-- when its page is full: that needs an index in that order.
CREATE INDEX tools_by_slug ON tools (slug COLLATE "C");

-- A search asks only which words a tool has, never where they are: without the positions,
-- each tool's row and the index are about a third of the size, and checking a row is faster.
UPDATE tools SET search = strip(search);
