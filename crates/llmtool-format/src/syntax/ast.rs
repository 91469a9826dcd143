//! The JSON syntax tree: every node and every key carries its byte span.

use crate::span::Span;

/// An object key's text. Keys are short names (a tool file has about fifty), so up to 24 bytes
/// are kept inline, without an allocation each.
pub type KeyName = compact_str::CompactString;

/// A JSON value with the span it was written at.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub span: Span,
    pub kind: NodeKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    Null,
    Bool(bool),
    /// A number, kept exactly as written (`1.0` stays `1.0`).
    Number(String),
    String(String),
    Array(Vec<Node>),
    Object(Vec<Member>),
    /// Something that could not be parsed as a value; a diagnostic explains it.
    Error,
}

/// One `"key": value` pair of an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub key: Key,
    pub value: Node,
}

/// An object key with its decoded text and the span of the quoted key.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    pub name: KeyName,
    pub span: Span,
}

impl Node {
    pub fn new(span: Span, kind: NodeKind) -> Self {
        Self { span, kind }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Node]> {
        match &self.kind {
            NodeKind::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&[Member]> {
        match &self.kind {
            NodeKind::Object(members) => Some(members),
            _ => None,
        }
    }

    /// The member called `name` in an object (the last one, if the key is repeated).
    pub fn get(&self, name: &str) -> Option<&Member> {
        self.as_object()?.iter().rev().find(|m| m.key.name == name)
    }

    /// The JSON type name used in messages: "a string", "an array", ...
    pub fn kind_name(&self) -> &'static str {
        match &self.kind {
            NodeKind::Null => "null",
            NodeKind::Bool(_) => "a boolean",
            NodeKind::Number(_) => "a number",
            NodeKind::String(_) => "a string",
            NodeKind::Array(_) => "an array",
            NodeKind::Object(_) => "an object",
            NodeKind::Error => "an invalid value",
        }
    }

    /// Whether the tree under this node contains a parse error.
    pub fn has_error(&self) -> bool {
        let mut pending = vec![self];
        while let Some(node) = pending.pop() {
            match &node.kind {
                NodeKind::Error => return true,
                NodeKind::Array(items) => pending.extend(items),
                NodeKind::Object(members) => pending.extend(members.iter().map(|m| &m.value)),
                _ => {}
            }
        }
        false
    }

    /// Converts to a `serde_json::Value` (numbers that do not fit become strings of their text).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match &self.kind {
            NodeKind::Null | NodeKind::Error => Value::Null,
            NodeKind::Bool(b) => Value::Bool(*b),
            NodeKind::Number(raw) => serde_json::from_str::<serde_json::Number>(raw)
                .map_or_else(|_| Value::String(raw.clone()), Value::Number),
            NodeKind::String(s) => Value::String(s.clone()),
            NodeKind::Array(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            NodeKind::Object(members) => Value::Object(
                members.iter().map(|m| (m.key.name.to_string(), m.value.to_json())).collect(),
            ),
        }
    }
}
