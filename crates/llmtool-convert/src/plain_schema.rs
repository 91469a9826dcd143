//! An input schema brought to the plain shape the importer reads (an object of `properties`
//! with `required`), so that parameters written with references or combinations do not vanish:
//! local `$ref`s are inlined, an `allOf` is merged, and the alternatives of a `oneOf` or
//! `anyOf` are united, their parameters required only where every alternative requires them.

use serde_json::{Map, Value};

use super::codes::UNSUPPORTED_PARAMETER;
use llmtool_format::diagnostic::Diagnostic;

/// How deep references are followed (a schema that refers to itself stops there).
const MAX_DEPTH: usize = 16;

/// How many values inlining may make: references that each refer to several others would
/// otherwise grow the schema exponentially with their depth. Past it, `$ref`s stay as they are.
const MAX_NODES: usize = 100_000;

/// `parameters` in the plain shape, and what the flattening changed that a reader should know.
pub(crate) fn plain(parameters: &Value, diagnostics: &mut Vec<Diagnostic>) -> Value {
    let resolved = resolve(parameters, parameters, 0, &mut MAX_NODES.clone());
    let Value::Object(mut root) = resolved else { return parameters.clone() };
    let mut properties = root.remove("properties").and_then(object).unwrap_or_default();
    let mut required = strings(root.get("required"));
    for member in root.get("allOf").and_then(Value::as_array).into_iter().flatten() {
        properties.extend(
            member.get("properties").and_then(Value::as_object).cloned().unwrap_or_default(),
        );
        required.extend(strings(member.get("required")));
    }
    for keyword in ["oneOf", "anyOf"] {
        let Some(alternatives) = root.get(keyword).and_then(Value::as_array) else { continue };
        let mut in_every: Option<Vec<String>> = None;
        for alternative in alternatives {
            let own = alternative.get("properties").and_then(Value::as_object);
            for (key, schema) in own.into_iter().flatten() {
                properties.entry(key.clone()).or_insert_with(|| schema.clone());
            }
            let needed = strings(alternative.get("required"));
            in_every = Some(match in_every {
                None => needed,
                Some(every) => every.into_iter().filter(|k| needed.contains(k)).collect(),
            });
        }
        required.extend(in_every.unwrap_or_default());
        diagnostics.push(Diagnostic::new(
            &UNSUPPORTED_PARAMETER,
            format!(
                "the parameters are one of {} alternatives (`{keyword}`): a tool takes them all, each required only where every alternative requires it",
                alternatives.len()
            ),
        ));
    }
    for schema in properties.values_mut() {
        *schema = nullable_or_single(schema);
    }
    required.sort();
    required.dedup();
    let mut plain = Map::new();
    plain.insert("type".into(), Value::String("object".into()));
    plain.insert("properties".into(), Value::Object(properties));
    plain
        .insert("required".into(), Value::Array(required.into_iter().map(Value::String).collect()));
    Value::Object(plain)
}

/// `schema` with every local `$ref` (`#/$defs/...`, `#/definitions/...`) replaced by what it
/// points to in `root`, down to [`MAX_DEPTH`], making at most `budget` values.
fn resolve(schema: &Value, root: &Value, depth: usize, budget: &mut usize) -> Value {
    if depth > MAX_DEPTH || *budget == 0 {
        return schema.clone();
    }
    *budget -= 1;
    match schema {
        Value::Object(object) => {
            if let Some(target) =
                object.get("$ref").and_then(Value::as_str).and_then(|r| pointer(root, r))
            {
                let mut merged = resolve(target, root, depth + 1, budget);
                // Keywords beside the reference (a description, say) win over the target's.
                if let Value::Object(merged) = &mut merged {
                    for (key, value) in object.iter().filter(|(k, _)| *k != "$ref") {
                        merged.insert(key.clone(), resolve(value, root, depth + 1, budget));
                    }
                }
                return merged;
            }
            Value::Object(
                object
                    .iter()
                    .map(|(k, v)| (k.clone(), resolve(v, root, depth + 1, budget)))
                    .collect(),
            )
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| resolve(v, root, depth + 1, budget)).collect())
        }
        other => other.clone(),
    }
}

/// What a local reference points to.
fn pointer<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    root.pointer(reference.strip_prefix('#')?)
}

/// A property written `anyOf`/`oneOf` of one type and `null` (a nullable value), or an `allOf`
/// of one schema, as that schema.
fn nullable_or_single(schema: &Value) -> Value {
    for keyword in ["anyOf", "oneOf", "allOf"] {
        let Some(options) = schema.get(keyword).and_then(Value::as_array) else { continue };
        let real: Vec<&Value> = options
            .iter()
            .filter(|o| o.get("type") != Some(&Value::String("null".into())))
            .collect();
        if let [only] = real.as_slice() {
            let mut merged = (*only).clone();
            if let (Value::Object(merged), Value::Object(outer)) = (&mut merged, schema) {
                for (key, value) in outer.iter().filter(|(k, _)| k.as_str() != keyword) {
                    merged.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
            return merged;
        }
    }
    schema.clone()
}

fn object(value: Value) -> Option<Map<String, Value>> {
    match value {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn references_are_inlined_combinations_united_and_growth_bounded() {
        let schema = json!({
            "$defs": { "city": { "type": "string", "description": "A city" } },
            "oneOf": [
                { "properties": { "from": { "$ref": "#/$defs/city" } }, "required": ["from"] },
                { "properties": { "from": { "$ref": "#/$defs/city" }, "to": { "anyOf": [{ "type": "string" }, { "type": "null" }] } }, "required": ["from", "to"] },
            ],
        });
        let mut notes = Vec::new();
        let flat = plain(&schema, &mut notes);
        assert_eq!(flat["properties"]["from"]["description"], "A city");
        assert_eq!(flat["properties"]["to"]["type"], "string");
        assert_eq!(flat["required"], json!(["from"]));
        assert_eq!(notes.len(), 1);

        // Thirty levels of definitions that each refer to the next ten times.
        let mut defs = Map::new();
        for level in 0..30 {
            let next: Map<String, Value> = (0..10)
                .map(|i| (format!("p{i}"), json!({ "$ref": format!("#/$defs/d{}", level + 1) })))
                .collect();
            defs.insert(format!("d{level}"), json!({ "type": "object", "properties": next }));
        }
        let deep = json!({ "$defs": defs, "properties": { "x": { "$ref": "#/$defs/d0" } } });
        let flat = plain(&deep, &mut Vec::new());
        assert!(flat.to_string().len() < 50_000_000, "the inlining stopped");
    }
}
