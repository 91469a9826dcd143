//! The canonical form of a tool file: what `llmtool fmt` writes.
//!
//! Two-space indentation; known keys in the order of the format's specification, unknown keys
//! after them in their original order (a smart tool in its own flat layout keeps it); the
//! nested avatar flattened; `model_version` as a list;
//! numeric parameters written as numbers; arrays of scalars on one line when that line fits in
//! 100 columns; one final newline. The canonical form of a canonical file is the file itself.

use crate::model::keys;
use crate::syntax::write_quoted;
use crate::syntax::{Key, Member, Node, NodeKind, is_json_number};

/// Lines of inline arrays longer than this are broken, one element per line.
const MAX_WIDTH: usize = 100;

/// The canonical text of a parsed tool file whose root is an object.
pub fn canonical(root: &Node) -> String {
    let normalized = normalize_tool(root);
    let mut out = String::with_capacity(1024);
    write_value(&mut out, &normalized, 0, 0);
    out.push('\n');
    out
}

fn normalize_tool(root: &Node) -> Node {
    if keys::is_flat_smart_tool(root) {
        // A smart tool in its own layout keeps it: the metadata's keys stay at the top level,
        // after the version, and the code comes last, being the longest.
        let metadata = keys::METADATA.iter().filter(|key| **key != "tool_code");
        let order: Vec<&str> = std::iter::once("version")
            .chain(metadata.copied())
            .chain(["model_prompt", "tool_code"])
            .collect();
        return normalize_metadata(root, &order);
    }
    let Some(members) = root.as_object() else { return root.clone() };
    let members = members
        .iter()
        .map(|m| match m.key.name.as_str() {
            "metadata" => {
                Member { key: m.key.clone(), value: normalize_metadata(&m.value, keys::METADATA) }
            }
            _ => m.clone(),
        })
        .collect();
    Node::new(root.span, NodeKind::Object(order(members, keys::TOP_LEVEL)))
}

/// The metadata object `node` in canonical form, its keys in `order`.
fn normalize_metadata(node: &Node, order_of_keys: &[&str]) -> Node {
    let Some(members) = node.as_object() else { return node.clone() };
    let has_flat_type = node.get("avatar_type").is_some();
    let mut out: Vec<Member> = Vec::with_capacity(members.len() + 1);
    for member in members {
        let value = &member.value;
        match member.key.name.as_str() {
            "avatar" if !has_flat_type && is_plain_nested_avatar(value) => {
                for inner in value.as_object().unwrap_or_default() {
                    out.push(inner.clone());
                }
            }
            "model_version" if value.as_str().is_some() => out.push(with_value(
                member,
                Node::new(value.span, NodeKind::Array(vec![value.clone()])),
            )),
            "parameters" => out
                .push(with_value(member, map_object(value, keys::PARAMETERS, normalize_parameter))),
            "creator" => {
                out.push(with_value(member, map_object(value, keys::CREATOR, Clone::clone)));
            }
            "expected_output" => {
                out.push(with_value(
                    member,
                    map_object(value, keys::EXPECTED_OUTPUT, Clone::clone),
                ));
            }
            "variables" => {
                let variables = match &value.kind {
                    NodeKind::Array(items) => NodeKind::Array(
                        items.iter().map(|v| map_object(v, keys::VARIABLE, Clone::clone)).collect(),
                    ),
                    other => other.clone(),
                };
                out.push(with_value(member, Node::new(value.span, variables)));
            }
            _ => out.push(member.clone()),
        }
    }
    Node::new(node.span, NodeKind::Object(order(out, order_of_keys)))
}

/// A nested avatar object with only the two known keys, as strings (anything else stays
/// nested, so nothing is lost).
fn is_plain_nested_avatar(value: &Node) -> bool {
    value.as_object().is_some_and(|members| {
        members.iter().all(|m| {
            keys::NESTED_AVATAR.contains(&m.key.name.as_str()) && m.value.as_str().is_some()
        })
    })
}

fn normalize_parameter(value: &Node) -> Node {
    match value.as_str() {
        Some(text) if is_json_number(text.trim()) => {
            Node::new(value.span, NodeKind::Number(text.trim().to_owned()))
        }
        _ => value.clone(),
    }
}

/// Orders an object's members (mapping each value of a known key) when `node` is an object.
fn map_object(node: &Node, known: &[&str], map_known: fn(&Node) -> Node) -> Node {
    let Some(members) = node.as_object() else { return node.clone() };
    let mapped = members
        .iter()
        .map(|m| {
            if known.contains(&m.key.name.as_str()) {
                with_value(m, map_known(&m.value))
            } else {
                m.clone()
            }
        })
        .collect();
    Node::new(node.span, NodeKind::Object(order(mapped, known)))
}

fn with_value(member: &Member, value: Node) -> Member {
    Member { key: Key { name: member.key.name.clone(), span: member.key.span }, value }
}

/// Known keys first, in `known` order; then the rest in their original order. A repeated key
/// keeps only its last value, the one every reader uses.
fn order(members: Vec<Member>, known: &[&str]) -> Vec<Member> {
    let mut last: Vec<Member> = Vec::with_capacity(members.len());
    for member in members {
        last.retain(|m| m.key.name != member.key.name);
        last.push(member);
    }
    let rank = |m: &Member| known.iter().position(|k| *k == m.key.name).unwrap_or(known.len());
    last.sort_by_key(rank);
    last
}

fn write_value(out: &mut String, node: &Node, indent: usize, line_start: usize) {
    match &node.kind {
        NodeKind::Null | NodeKind::Error => out.push_str("null"),
        NodeKind::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        NodeKind::Number(raw) => out.push_str(raw),
        NodeKind::String(s) => write_quoted(out, s),
        NodeKind::Array(items) if items.is_empty() => out.push_str("[]"),
        NodeKind::Array(items) => {
            let column = out.len() - line_start;
            if let Some(inline) =
                inline_array(items).filter(|s| column + s.chars().count() <= MAX_WIDTH)
            {
                out.push_str(&inline);
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                let start = out.len();
                push_indent(out, indent + 1);
                write_value(out, item, indent + 1, start);
            }
            out.push('\n');
            push_indent(out, indent);
            out.push(']');
        }
        NodeKind::Object(members) if members.is_empty() => out.push_str("{}"),
        NodeKind::Object(members) => {
            out.push('{');
            for (i, member) in members.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                let start = out.len();
                push_indent(out, indent + 1);
                write_quoted(out, &member.key.name);
                out.push_str(": ");
                write_value(out, &member.value, indent + 1, start);
            }
            out.push('\n');
            push_indent(out, indent);
            out.push('}');
        }
    }
}

/// `["a", "b"]` when every element is a scalar.
fn inline_array(items: &[Node]) -> Option<String> {
    let mut line = String::from("[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            line.push_str(", ");
        }
        match &item.kind {
            NodeKind::Array(_) | NodeKind::Object(_) => return None,
            _ => write_value(&mut line, item, 0, 0),
        }
        if line.len() > MAX_WIDTH * 4 {
            return None;
        }
    }
    line.push(']');
    Some(line)
}

fn push_indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}
