//! One SQL dialect for the stores that keep runs and conversations: statements are written in
//! PostgreSQL's syntax once, and rewritten for SQLite where SQLite runs them (the team
//! server's library on either database, the run log on SQLite).

/// A statement in PostgreSQL's syntax, rewritten for SQLite by three rules: `$N` parameters
/// become `?N`, `::type` casts and `COLLATE "C"` are dropped (a JSON path's `$` and other
/// text are kept as they are).
pub fn for_sqlite(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix(" COLLATE \"C\"") {
            rest = after;
        } else if let Some(after) = rest.strip_prefix("::") {
            rest = after.trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_');
        } else if c == '$' && rest[1..].starts_with(|c: char| c.is_ascii_digit()) {
            out.push('?');
            rest = &rest[1..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_rewritten_for_sqlite_by_three_rules() {
        assert_eq!(
            for_sqlite(
                "SELECT record::text FROM runs WHERE ($1::text IS NULL OR slug = $1) AND n < $12"
            ),
            "SELECT record FROM runs WHERE (?1 IS NULL OR slug = ?1) AND n < ?12"
        );
        assert_eq!(
            for_sqlite("ORDER BY t.slug COLLATE \"C\" LIMIT $2"),
            "ORDER BY t.slug LIMIT ?2"
        );
        // A JSON path's `$` is not a parameter; text that is neither is kept as it is.
        assert_eq!(
            for_sqlite("json_extract(v.body, '$.metadata.creator') = 'é$'"),
            "json_extract(v.body, '$.metadata.creator') = 'é$'"
        );
    }
}
