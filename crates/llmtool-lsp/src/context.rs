//! Where in the JSON the cursor is: the path of keys and indexes down to it, and whether it
//! is where a key or a value goes. Read from the recovering parser's tree, so a file that is
//! half typed still has a place.

use llmtool_format::Span;
use llmtool_format::syntax::{Member, Node, NodeKind, parse};

/// One step down the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// What the cursor is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The path to the object or array the cursor is in, or to the value it is on.
    pub path: Vec<Step>,
    pub slot: Slot,
    /// The string literal the cursor is in, quotes included, if any.
    pub literal: Option<Span>,
    /// The keys the object the cursor is in already has.
    pub siblings: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// Where a key of the object at `path` goes (or is being typed).
    Key,
    /// On or where the value at `path` goes.
    Value,
}

impl Place {
    /// Whether the path is `keys`, where `*` stands for any index.
    pub fn is(&self, keys: &[&str]) -> bool {
        self.path.len() == keys.len()
            && self.path.iter().zip(keys).all(|(step, want)| match step {
                Step::Key(name) => name == want,
                Step::Index(_) => *want == "*",
            })
    }
}

/// The place of `offset` in `text`; `None` outside the top-level object.
pub fn place_at(text: &str, offset: usize) -> Option<Place> {
    let tree = parse(text);
    let root = tree.root.as_ref()?;
    let mut path = Vec::new();
    let mut node = root;
    if !inside(node.span, offset) {
        return None;
    }
    loop {
        match &node.kind {
            NodeKind::Object(members) => {
                let typed = members.iter().position(|m| inside(m.key.span, offset));
                let siblings = members
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| Some(i) != typed)
                    .map(|(_, m)| m.key.name.to_string())
                    .collect();
                if let Some(member) = typed.map(|i| &members[i]) {
                    return Some(Place {
                        path,
                        slot: Slot::Key,
                        literal: Some(member.key.span),
                        siblings,
                    });
                }
                match members
                    .iter()
                    .find(|m| inside(m.value.span, offset) || value_pending(text, m, offset))
                {
                    Some(member) => {
                        path.push(Step::Key(member.key.name.to_string()));
                        if !inside(member.value.span, offset) {
                            return Some(Place {
                                path,
                                slot: Slot::Value,
                                literal: None,
                                siblings: Vec::new(),
                            });
                        }
                        node = &member.value;
                    }
                    None => {
                        let literal = open_string_before(text, offset);
                        return Some(Place { path, slot: Slot::Key, literal, siblings });
                    }
                }
            }
            NodeKind::Array(items) => match items.iter().position(|item| inside(item.span, offset))
            {
                Some(index) => {
                    path.push(Step::Index(index));
                    node = &items[index];
                }
                None => {
                    return Some(Place {
                        path,
                        slot: Slot::Value,
                        literal: None,
                        siblings: Vec::new(),
                    });
                }
            },
            NodeKind::String(_) => {
                return Some(Place {
                    path,
                    slot: Slot::Value,
                    literal: Some(node.span),
                    siblings: Vec::new(),
                });
            }
            _ => {
                return Some(Place {
                    path,
                    slot: Slot::Value,
                    literal: None,
                    siblings: Vec::new(),
                });
            }
        }
    }
}

/// After a span's first byte and up to its end: inside a container or a literal, or right
/// after it, where the cursor of someone still typing it is.
fn inside(span: Span, offset: usize) -> bool {
    span.start < offset && offset <= span.end
}

/// The cursor is after `"key":` with the value not written yet (the parser gave it an empty
/// or error node after the cursor).
fn value_pending(text: &str, member: &Member, offset: usize) -> bool {
    let between = text.get(member.key.span.end..offset).unwrap_or_default();
    let after_colon =
        between.trim_start().strip_prefix(':').is_some_and(|rest| rest.trim().is_empty());
    after_colon
        && (matches!(member.value.kind, NodeKind::Error) || member.value.span.start >= offset)
}

/// A string opened before the cursor on its line and not closed: a key being typed.
fn open_string_before(text: &str, offset: usize) -> Option<Span> {
    let line_start = text.get(..offset)?.rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..offset];
    let quotes = line.match_indices('"').count();
    (quotes % 2 == 1).then(|| Span::new(line_start + line.rfind('"').unwrap_or_default(), offset))
}

/// The node at `path` under `root`.
pub fn node_at<'n>(root: &'n Node, path: &[Step]) -> Option<&'n Node> {
    path.iter().try_fold(root, |node, step| match step {
        Step::Key(name) => node.get(name).map(|m| &m.value),
        Step::Index(i) => node.as_array()?.get(*i),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Place {
        let offset = text.find('|').unwrap_or_default();
        let text = text.replacen('|', "", 1);
        place_at(&text, offset).unwrap_or_else(|| panic!("no place in {text}"))
    }

    #[test]
    fn keys_values_and_items_are_told_apart() {
        let place = at(r#"{"metadata": {"variables": [{"name": "x", "type": "|"}]}}"#);
        assert!(place.is(&["metadata", "variables", "*", "type"]) && place.slot == Slot::Value);
        let place = at(r#"{"metadata": {"variables": [{"name": "x", "|"}]}}"#);
        assert!(place.is(&["metadata", "variables", "*"]) && place.slot == Slot::Key, "{place:?}");
        assert_eq!(place.siblings, ["name"]);
        let place = at(r#"{"metadata": {"model_version": ["gpt-4o", "|"]}}"#);
        assert!(place.is(&["metadata", "model_version", "*"]), "{place:?}");
        let place = at(r#"{"model_prompt": "a", "metadata": {"pro|"#);
        assert!(place.is(&["metadata"]) && place.slot == Slot::Key, "{place:?}");
        let place = at(r#"{"x-dlp": |}"#);
        assert!(place.is(&["x-dlp"]) && place.slot == Slot::Value, "{place:?}");
    }
}
