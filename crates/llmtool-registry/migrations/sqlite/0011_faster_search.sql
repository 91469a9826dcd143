-- What a search result shows of a version besides its name and description (its creator's
-- name, whether it has a picture, whether it is a smart tool), kept in columns when it is
-- published, so that a search reads no tool file. Versions already kept are filled in once.
ALTER TABLE versions ADD COLUMN creator TEXT;
ALTER TABLE versions ADD COLUMN has_avatar INTEGER NOT NULL DEFAULT 0;
ALTER TABLE versions ADD COLUMN smart INTEGER NOT NULL DEFAULT 0;

UPDATE versions SET
    creator = CASE json_type(body, '$.metadata.creator') WHEN 'text'
        THEN json_extract(body, '$.metadata.creator')
        ELSE json_extract(body, '$.metadata.creator.name') END,
    has_avatar = (lower(COALESCE(json_extract(body, '$.metadata.avatar_type'),
            json_extract(body, '$.metadata.avatar.avatar_type'), '')) = 'base64'
        OR COALESCE(CASE json_type(body, '$.metadata.avatar') WHEN 'text'
            THEN json_extract(body, '$.metadata.avatar') END,
            json_extract(body, '$.metadata.avatar.avatar'), '') GLOB 'data:*;base64,*'),
    smart = (json_type(body, '$.tool_code') IS 'text'
        OR json_type(body, '$.metadata.tool_code') IS 'text');
