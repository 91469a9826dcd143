-- The pictures an image tool's run made, kept with the run (runs started in the studio or
-- through `POST /tools/{slug}/run`), for its owner to see again. The library keeps at most
-- as many bytes of them as its server allows: past that, the oldest runs' pictures go (their
-- runs stay, with each picture's size and SHA-256 in `record`).
CREATE TABLE run_pictures (
    run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    -- 1 for the run's first picture, then 2, 3, ...
    position INTEGER NOT NULL,
    -- `png`, `jpeg` or `webp`, as the picture's own first bytes say (what it is served as).
    format TEXT NOT NULL,
    width INTEGER NOT NULL,
    height INTEGER NOT NULL,
    -- The bytes' length, before them: totalling the kept bytes reads no picture.
    size BIGINT NOT NULL,
    sha256 TEXT NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (run_id, position)
);
