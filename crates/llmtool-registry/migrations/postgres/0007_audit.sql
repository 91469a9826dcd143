-- The audit log: every change of the library's people, tools, tokens and settings, who made
-- it, from which address, and what the thing was before and after (never a secret).
-- Append-only: the trigger refuses to change or delete a row.
CREATE TABLE audit (
    id BIGSERIAL PRIMARY KEY,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    address TEXT,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    before TEXT,
    after TEXT
);
CREATE INDEX audit_at ON audit (at);
CREATE INDEX audit_action ON audit (action, id);
CREATE INDEX audit_target ON audit (target, id);
CREATE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only';
END;
$$;
CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON audit
    FOR EACH ROW EXECUTE FUNCTION audit_append_only();
