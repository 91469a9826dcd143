//! The values a user gives for a tool's variables, before they are checked.

use foldhash::{HashMap, HashSet};

use serde_json::Value as Json;

use super::VariableSpec;
use crate::model::VariableKind;

/// Values by variable name, in the order given. A name given several times accumulates its
/// items, which is how a multi-select receives several values from repeated `--var` flags.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    entries: Vec<Input>,
    /// Where each name's entry is in `entries`.
    index: HashMap<String, usize>,
}

impl PartialEq for Inputs {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl Eq for Inputs {}

/// The items given for one name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub name: String,
    pub items: Vec<String>,
    /// Whether the value was given as a list (a JSON array) rather than item by item.
    pub as_list: bool,
}

/// Why a JSON object cannot be read as inputs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputsError {
    #[error("the values must be a JSON object of variable names to values, found {0}")]
    NotAnObject(&'static str),
    #[error(
        "the value of `{name}` must be a string, a number, a boolean or a list of them, found {found}"
    )]
    BadValue { name: String, found: &'static str },
}

impl Inputs {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one item for `name` (accumulating with earlier ones).
    pub fn push(&mut self, name: impl Into<String>, item: impl Into<String>) {
        let name = name.into();
        let item = item.into();
        match self.index.get(&name) {
            Some(&at) => self.entries[at].items.push(item),
            None => self.add(Input { name, items: vec![item], as_list: false }),
        }
    }

    /// Sets `name` to a list of items, replacing anything given before.
    pub fn set_list(&mut self, name: impl Into<String>, items: Vec<String>) {
        self.replace(Input { name: name.into(), items, as_list: true });
    }

    fn add(&mut self, input: Input) {
        self.index.insert(input.name.clone(), self.entries.len());
        self.entries.push(input);
    }

    /// Puts `input` last, in place of any earlier entry of its name.
    fn replace(&mut self, input: Input) {
        if let Some(at) = self.index.remove(&input.name) {
            self.entries.remove(at);
            for position in self.index.values_mut() {
                if *position > at {
                    *position -= 1;
                }
            }
        }
        self.add(input);
    }

    /// Reads a JSON object of values for `variables`, each as [`Inputs::add_json`] says.
    pub fn from_json(json: &Json, variables: &[VariableSpec]) -> Result<Self, InputsError> {
        let Json::Object(map) = json else { return Err(InputsError::NotAnObject(json_kind(json))) };
        let mut inputs = Inputs::new();
        for (name, value) in map {
            let variable = variables.iter().find(|v| &v.name == name);
            inputs.add_json(name, value, variable)?;
        }
        Ok(inputs)
    }

    /// Sets `name` to a value given as JSON, replacing anything given before (`null` leaves
    /// it as it was). The one rule
    /// for values given as JSON, wherever they come from (`--vars`, MCP prompt and tool-call
    /// arguments):
    ///
    /// - `null` means "not given";
    /// - a string is the value; for a multi-select `variable` it is read as a list: a JSON
    ///   array written as text, else one allowed value whole (which may hold a comma), else
    ///   items separated by commas (trimmed, empty ones dropped);
    /// - a number or a boolean is its JSON text, except that a boolean given for a select
    ///   whose allowed values spell it in another case (`True`, as Python writes it) is that
    ///   allowed value;
    /// - an array is a list of such strings, numbers and booleans;
    /// - an object, or an array holding `null`, an array or an object, is an error.
    pub fn add_json(
        &mut self,
        name: &str,
        value: &Json,
        variable: Option<&VariableSpec>,
    ) -> Result<(), InputsError> {
        let bad =
            |found: &Json| InputsError::BadValue { name: name.to_owned(), found: json_kind(found) };
        match value {
            Json::Null => {}
            Json::String(text) => match variable.filter(|v| v.kind == VariableKind::MultiSelect) {
                Some(variable) => self.set_list(name, list_items(text, &variable.allowed_values)),
                None => self.set_one(name, text.clone()),
            },
            Json::Number(_) | Json::Bool(_) => {
                self.set_one(name, scalar_text(value, variable).unwrap_or_default());
            }
            Json::Array(items) => {
                let items =
                    items.iter().map(|item| scalar_text(item, variable).ok_or_else(|| bad(item)));
                self.set_list(name, items.collect::<Result<_, _>>()?);
            }
            Json::Object(_) => return Err(bad(value)),
        }
        Ok(())
    }

    /// Sets `name` to one value, replacing anything given before.
    fn set_one(&mut self, name: &str, item: String) {
        self.replace(Input { name: name.to_owned(), items: vec![item], as_list: false });
    }

    /// Merges `other` into `self`; names in `other` replace those in `self`, and come last.
    pub fn extend(&mut self, other: Inputs) {
        let replaced: HashSet<&str> = other.entries.iter().map(|e| e.name.as_str()).collect();
        let mut kept: Vec<Input> = std::mem::take(&mut self.entries)
            .into_iter()
            .filter(|e| !replaced.contains(e.name.as_str()))
            .collect();
        kept.extend(other.entries);
        self.index = kept.iter().enumerate().map(|(at, e)| (e.name.clone(), at)).collect();
        self.entries = kept;
    }

    pub fn get(&self, name: &str) -> Option<&Input> {
        self.index.get(name).map(|&at| &self.entries[at])
    }

    pub fn iter(&self) -> impl Iterator<Item = &Input> {
        self.entries.iter()
    }
}

/// A value or list item given as JSON: a string as is, a number as its JSON text, a boolean
/// as the allowed value of `variable` that spells it (in any case), else as its JSON text.
fn scalar_text(item: &Json, variable: Option<&VariableSpec>) -> Option<String> {
    match item {
        Json::String(text) => Some(text.clone()),
        Json::Number(_) => Some(item.to_string()),
        Json::Bool(yes) => {
            let text = yes.to_string();
            let allowed = variable.map_or(&[][..], |v| v.allowed_values.as_slice());
            Some(
                allowed
                    .iter()
                    .find(|value| value.eq_ignore_ascii_case(&text))
                    .unwrap_or(&text)
                    .clone(),
            )
        }
        _ => None,
    }
}

/// The items of a multi-select value given as one string.
fn list_items(text: &str, allowed: &[String]) -> Vec<String> {
    if let Ok(Json::Array(items)) = serde_json::from_str::<Json>(text)
        && let Some(items) =
            items.iter().map(|item| scalar_text(item, None)).collect::<Option<Vec<_>>>()
    {
        return items;
    }
    let whole = text.trim();
    if allowed.iter().any(|a| a == whole) {
        return vec![whole.to_owned()];
    }
    text.split(',').map(str::trim).filter(|item| !item.is_empty()).map(str::to_owned).collect()
}

fn json_kind(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

    use serde_json::json;

    use super::*;
    use crate::Document;
    use crate::template::ToolTemplate;

    fn variables() -> Vec<VariableSpec> {
        let text = json!({
            "model_prompt": "{{topic}} {{tags}}",
            "metadata": { "variables": [
                { "name": "topic", "type": "text" },
                { "name": "tags", "type": "multi-select", "allowed_values": ["a, b", "c", "d"] },
            ]},
        });
        let document = Document::from_text(text.to_string());
        ToolTemplate::new(document.tool.as_ref().unwrap()).variables().to_vec()
    }

    fn items(value: &Json) -> Result<Vec<String>, InputsError> {
        let inputs = Inputs::from_json(&json!({ "tags": value, "topic": 7 }), &variables())?;
        assert_eq!(inputs.get("topic").unwrap().items, ["7"]);
        Ok(inputs.get("tags").map(|i| i.items.clone()).unwrap_or_default())
    }

    #[test]
    fn a_multi_select_reads_arrays_json_text_whole_values_and_commas() {
        assert_eq!(items(&json!(["c", "a, b"])).unwrap(), ["c", "a, b"]);
        assert_eq!(items(&json!(["c", 1, true])).unwrap(), ["c", "1", "true"]);
        assert_eq!(items(&json!(r#"["c", "a, b"]"#)).unwrap(), ["c", "a, b"]);
        assert_eq!(items(&json!("a, b")).unwrap(), ["a, b"], "an allowed value is taken whole");
        assert_eq!(items(&json!(" c ,d,")).unwrap(), ["c", "d"]);
        assert!(items(&json!("")).unwrap().is_empty());
        assert!(items(&json!(null)).unwrap().is_empty(), "null is not given");
    }

    #[test]
    fn a_boolean_takes_the_spelling_of_the_selects_allowed_value() {
        let text = json!({
            "model_prompt": "{{loud}} {{quiet}} {{note}}",
            "metadata": { "variables": [
                { "name": "loud", "type": "single-select", "allowed_values": ["True", "False"] },
                { "name": "quiet", "type": "multi-select", "allowed_values": ["TRUE", "no"] },
                { "name": "note", "type": "text" },
            ]},
        });
        let document = Document::from_text(text.to_string());
        let variables = ToolTemplate::new(document.tool.as_ref().unwrap()).variables().to_vec();
        let given = json!({ "loud": false, "quiet": [true, false], "note": true });
        let inputs = Inputs::from_json(&given, &variables).unwrap();
        assert_eq!(inputs.get("loud").unwrap().items, ["False"]);
        assert_eq!(inputs.get("quiet").unwrap().items, ["TRUE", "false"]);
        assert_eq!(inputs.get("note").unwrap().items, ["true"], "text has no spelling of its own");
    }

    #[test]
    fn objects_and_nested_values_are_refused_with_the_name() {
        for bad in [json!({"x": 1}), json!(["c", null]), json!([["c"]]), json!([{"c": 1}])] {
            let error = items(&bad).unwrap_err().to_string();
            assert!(error.contains("`tags`"), "{error}");
        }
        let text = Inputs::from_json(&json!({ "topic": "a, b" }), &variables()).unwrap();
        assert_eq!(text.get("topic").unwrap().items, ["a, b"], "commas split multi-selects only");
        assert!(Inputs::from_json(&json!([1]), &variables()).is_err());
    }
}
