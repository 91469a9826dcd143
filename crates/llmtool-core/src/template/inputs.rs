//! The values a user gives for a tool's variables, before they are checked.

use std::collections::{HashMap, HashSet};

use serde_json::Value as Json;

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
        "the value of `{name}` must be a string, a number, a boolean or a list of strings, found {found}"
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

    /// Reads a JSON object: strings (numbers and booleans as their JSON text) are single
    /// values, arrays of strings are lists; `null` means "not given".
    pub fn from_json(json: &Json) -> Result<Self, InputsError> {
        let Json::Object(map) = json else { return Err(InputsError::NotAnObject(json_kind(json))) };
        let mut inputs = Inputs::new();
        for (name, value) in map {
            match value {
                Json::Null => {}
                Json::String(s) => inputs.push(name, s.clone()),
                Json::Number(_) | Json::Bool(_) => inputs.push(name, value.to_string()),
                Json::Array(items) => {
                    let items = items
                        .iter()
                        .map(|item| match item {
                            Json::String(s) => Ok(s.clone()),
                            other => Err(InputsError::BadValue {
                                name: name.clone(),
                                found: json_kind(other),
                            }),
                        })
                        .collect::<Result<_, _>>()?;
                    inputs.set_list(name, items);
                }
                Json::Object(_) => {
                    return Err(InputsError::BadValue { name: name.clone(), found: "an object" });
                }
            }
        }
        Ok(inputs)
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
