//! LT114: an entry of `metadata.functions` that does not say where one function comes from.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::model::{FunctionEntry, FunctionSource};
use crate::naming::is_portable;
use crate::rules::Context;

declare_rule! {
    /// An entry of `metadata.functions` names no source or several, or misses what its source
    /// needs.
    ///
    /// Each entry is exactly one of `{"builtin": NAME}` (a `query_database` with the
    /// `"database"` it reads), `{"tool": "registry:SLUG"}` or `{"mcp": SERVER, "name":
    /// FUNCTION}`, and the function's name is one every API takes (letters, digits, `_` and
    /// `-`, up to 64).
    ///
    /// ```json
    /// { "model_prompt": "Answer {{question}}", "metadata": { "functions": [{ "builtin": "query_database" }] } }
    /// ```
    pub static INVALID_FUNCTION_ENTRY = ("LT114", "invalid-function-entry", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(functions) = cx.tool.metadata.as_ref().and_then(|m| m.functions.as_ref()) else {
        return;
    };
    for entry in &functions.value {
        if let Some((message, help)) = problem(entry) {
            out.push(
                Diagnostic::new(&INVALID_FUNCTION_ENTRY, message).at(entry.span).with_help(help),
            );
        }
    }
}

/// What is wrong with `entry`, and how to put it right.
fn problem(entry: &FunctionEntry) -> Option<(String, String)> {
    let shapes = "write one of {\"builtin\": NAME}, {\"tool\": \"registry:SLUG\"} or \
                  {\"mcp\": SERVER, \"name\": FUNCTION}";
    let Some(source) = entry.source() else {
        let sources =
            [&entry.builtin, &entry.tool, &entry.mcp].iter().filter(|s| s.is_some()).count();
        let message = match sources {
            0 => "the function entry names no source".to_owned(),
            1 => "the MCP function entry has no `name`".to_owned(),
            _ => "the function entry names several sources".to_owned(),
        };
        return Some((message, shapes.to_owned()));
    };
    let stray = |key: &str| {
        Some((format!("`{key}` does not belong to this function entry"), shapes.to_owned()))
    };
    match source {
        FunctionSource::Builtin { name, database } => {
            if entry.name.is_some() {
                return stray("name");
            }
            match (name, database) {
                ("query_database", None) => Some((
                    "`query_database` needs the `database` it reads".to_owned(),
                    "name a database of the config file or of the server's integrations: \
                     {\"builtin\": \"query_database\", \"database\": \"NAME\"}"
                        .to_owned(),
                )),
                ("query_database", Some(_)) | (_, None) => None,
                (_, Some(_)) => stray("database"),
            }
        }
        FunctionSource::Tool(reference) => {
            if entry.database.is_some() || entry.name.is_some() {
                return stray(if entry.database.is_some() { "database" } else { "name" });
            }
            let slug =
                reference.strip_prefix("registry:").map(|s| s.split('@').next().unwrap_or(""));
            match slug {
                Some(slug) if !slug.is_empty() => None,
                _ => Some((
                    format!("`{reference}` is not a library reference"),
                    "name a tool of the library as `registry:SLUG` (or `registry:SLUG@VERSION`)"
                        .to_owned(),
                )),
            }
        }
        FunctionSource::Mcp { name, .. } => {
            if entry.database.is_some() {
                return stray("database");
            }
            (!is_portable(name)).then(|| {
                (
                    format!("`{name}` is not a function name every API takes"),
                    "use letters, digits, `_` and `-`, a letter or `_` first, up to 64".to_owned(),
                )
            })
        }
    }
}
