//! What the published JSON schema says about a place in a tool file: the keys an object takes,
//! each key's documentation, and the values an enum allows. One source for the editor and
//! for every other schema-aware tool.

use std::sync::LazyLock;

use llmtool_format::schema::json_schema;
use serde_json::Value;

use crate::context::Step;

static SCHEMA: LazyLock<Value> = LazyLock::new(json_schema);

/// `node` with its `$ref` (to `#/$defs/...`) followed.
fn resolved(node: &'static Value) -> &'static Value {
    let target = node.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/"));
    match target.and_then(|name| SCHEMA.get("$defs")?.get(name)) {
        Some(found) => found,
        None => node,
    }
}

/// The schema of the value at `path`.
pub fn at(path: &[Step]) -> Option<&'static Value> {
    path.iter().try_fold(resolved(&SCHEMA), |node, step| {
        let next = match step {
            Step::Key(key) => node.get("properties")?.get(key)?,
            Step::Index(_) => node.get("items")?,
        };
        Some(resolved(next))
    })
}

/// The keys the object at `path` takes, each with its documentation when it has one.
pub fn keys(path: &[Step]) -> Vec<(&'static str, Option<&'static str>)> {
    let Some(properties) = at(path).and_then(|s| s.get("properties")).and_then(Value::as_object)
    else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(key, schema)| {
            (key.as_str(), resolved(schema).get("description").and_then(Value::as_str))
        })
        .collect()
}

/// The documentation of the value at `path`.
pub fn doc(path: &[Step]) -> Option<&'static str> {
    at(path)?.get("description").and_then(Value::as_str)
}

/// The values an enum at `path` allows.
pub fn enum_values(path: &[Step]) -> Vec<&'static str> {
    at(path)
        .and_then(|s| s.get("enum"))
        .and_then(Value::as_array)
        .map(|values| values.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(keys: &[&str]) -> Vec<Step> {
        keys.iter()
            .map(|k| if *k == "*" { Step::Index(0) } else { Step::Key((*k).to_owned()) })
            .collect()
    }

    #[test]
    fn references_and_items_are_followed() {
        let variable_keys: Vec<&str> =
            keys(&path(&["metadata", "variables", "*"])).into_iter().map(|(k, _)| k).collect();
        assert_eq!(variable_keys, ["name", "type", "description", "default", "allowed_values"]);
        assert!(
            enum_values(&path(&["metadata", "variables", "*", "type"])).contains(&"multi-select")
        );
        assert_eq!(enum_values(&path(&["x-dlp"])), ["off", "warn", "redact", "block"]);
        assert!(doc(&path(&["model_prompt"])).is_some_and(|d| d.contains("{{name}}")));
    }
}
