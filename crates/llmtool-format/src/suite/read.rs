//! Reading a test file (JSON or YAML) into a [`TestFile`], with a diagnostic for every
//! problem and nothing thrown away that can be kept: a broken assertion is left out, the rest
//! of its case stays.

use serde_json::Value;

use super::codes::{INVALID_ASSERTION, TEST_FILE_SHAPE, UNKNOWN_ASSERTION};
use super::model::{ASSERTION_TYPES, Assertion, Case, Check, Metric, TestFile};
use crate::diagnostic::{Diagnostic, Severity};
use crate::span::Span;
use crate::syntax::{Key, Member, Node, NodeKind};

/// A test file read: what could be understood of it, and its problems.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadTests {
    pub file: Option<TestFile>,
    pub diagnostics: Vec<Diagnostic>,
}

impl ReadTests {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == Severity::Error)
    }
}

/// Reads the JSON test file `text` (leniently: comments and trailing commas are warned about).
pub fn read_json(text: &str) -> ReadTests {
    let tree = crate::syntax::parse(text);
    let mut diagnostics = tree.diagnostics;
    // The parser words a top level that is not an object for tool files; ours says it for
    // test files.
    diagnostics.retain(|d| d.rule != &crate::syntax::codes::NOT_AN_OBJECT);
    let file = tree.root.as_ref().and_then(|root| lower(root, &mut diagnostics));
    ReadTests { file, diagnostics }
}

/// Reads the YAML test file `text`. YAML has no spans here: each case, and everything in it, is
/// placed at the line of its list item; the rest at the top of the file.
pub fn read_yaml(text: &str) -> ReadTests {
    let value = match crate::yaml::from_str(text) {
        Ok(value) => value,
        Err(error) => {
            let at = Span::empty(error.at.unwrap_or(0));
            let diagnostic =
                Diagnostic::new(&TEST_FILE_SHAPE, format!("not valid YAML: {error}")).at(at);
            return ReadTests { file: None, diagnostics: vec![diagnostic] };
        }
    };
    let mut root = node_of(&value, Span::empty(0));
    place_cases(&mut root, text);
    let mut diagnostics = Vec::new();
    let file = lower(&root, &mut diagnostics);
    ReadTests { file, diagnostics }
}

/// A JSON value as a syntax node, every part at `span`.
fn node_of(value: &Value, span: Span) -> Node {
    let kind = match value {
        Value::Null => NodeKind::Null,
        Value::Bool(b) => NodeKind::Bool(*b),
        Value::Number(n) => NodeKind::Number(n.to_string()),
        Value::String(s) => NodeKind::String(s.clone()),
        Value::Array(items) => NodeKind::Array(items.iter().map(|v| node_of(v, span)).collect()),
        Value::Object(members) => NodeKind::Object(
            members
                .iter()
                .map(|(name, v)| Member {
                    key: Key { name: name.as_str().into(), span },
                    value: node_of(v, span),
                })
                .collect(),
        ),
    };
    Node::new(span, kind)
}

/// Gives each case of a YAML file the span of its `- ` line under `cases:`.
fn place_cases(root: &mut Node, text: &str) {
    let starts = case_lines(text);
    let NodeKind::Object(members) = &mut root.kind else { return };
    let Some(cases) = members.iter_mut().find(|m| m.key.name == "cases") else { return };
    let NodeKind::Array(items) = &mut cases.value.kind else { return };
    for (item, (start, end)) in items.iter_mut().zip(starts) {
        place_all(item, Span::new(start, end));
    }
}

/// Places `node` and everything in it at `span`.
fn place_all(node: &mut Node, span: Span) {
    node.span = span;
    match &mut node.kind {
        NodeKind::Object(members) => {
            for member in members {
                member.key.span = span;
                place_all(&mut member.value, span);
            }
        }
        NodeKind::Array(items) => items.iter_mut().for_each(|item| place_all(item, span)),
        _ => {}
    }
}

/// The byte ranges of the list items directly under a top-level `cases:` key.
fn case_lines(text: &str) -> Vec<(usize, usize)> {
    let mut offset = 0;
    let mut inside = false;
    let mut indent = None;
    let mut starts = Vec::new();
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let depth = line.len() - trimmed.len();
        let content = trimmed.trim_end();
        if depth == 0 && !content.is_empty() && !content.starts_with('#') {
            if inside && !content.starts_with('-') {
                break;
            }
            inside = content.starts_with("cases:");
        } else if inside && content.starts_with('-') && *indent.get_or_insert(depth) == depth {
            starts.push((offset + depth, offset + depth + content.len()));
        }
        if inside && depth == 0 && content.starts_with('-') && indent.is_none() {
            indent = Some(0);
            starts.push((offset, offset + content.len()));
        }
        offset += line.len();
    }
    starts
}

fn shape(span: Span, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(&TEST_FILE_SHAPE, message).at(span)
}

fn lower(root: &Node, out: &mut Vec<Diagnostic>) -> Option<TestFile> {
    let Some(members) = root.as_object() else {
        out.push(shape(
            root.span,
            format!("a test file is an object with `cases`, found {}", root.kind_name()),
        ));
        return None;
    };
    let mut file = TestFile { tool: None, threshold: None, shared: Vec::new(), cases: Vec::new() };
    let mut cases = None;
    for member in members {
        let value = &member.value;
        match member.key.name.as_str() {
            "$schema" | "description" => {}
            "tool" => match value.as_str() {
                Some(tool) => file.tool = Some(tool.to_owned()),
                None => out.push(shape(
                    value.span,
                    format!("`tool` must be a path, found {}", value.kind_name()),
                )),
            },
            "threshold" => file.threshold = fraction(value, "threshold", out),
            "assert" => file.shared = assertions(value, "assert", out),
            "cases" => cases = Some(value),
            other => out.push(unknown_key(
                &member.key,
                other,
                &["tool", "threshold", "assert", "cases", "description"],
            )),
        }
    }
    let Some(cases) = cases else {
        out.push(shape(root.span, "a test file needs `cases`, a list of cases"));
        return Some(file);
    };
    let Some(items) = cases.as_array() else {
        out.push(shape(cases.span, format!("`cases` must be a list, found {}", cases.kind_name())));
        return Some(file);
    };
    for (index, item) in items.iter().enumerate() {
        if let Some(case) = lower_case(item, index, out) {
            file.cases.push(case);
        }
    }
    Some(file)
}

fn unknown_key(key: &Key, name: &str, known: &[&str]) -> Diagnostic {
    let mut diagnostic = shape(key.span, format!("unknown field `{name}`"));
    if let Some(near) = crate::suggest::closest(name, known.iter().copied()) {
        diagnostic = diagnostic.with_help(format!("did you mean `{near}`?"));
    }
    diagnostic
}

fn lower_case(item: &Node, index: usize, out: &mut Vec<Diagnostic>) -> Option<Case> {
    let Some(members) = item.as_object() else {
        out.push(shape(
            item.span,
            format!("case {} must be an object, found {}", index + 1, item.kind_name()),
        ));
        return None;
    };
    let mut case = Case {
        name: format!("case {}", index + 1),
        vars: serde_json::Map::new(),
        assertions: Vec::new(),
        threshold: None,
        span: item.span,
        vars_span: item.span,
    };
    for member in members {
        let value = &member.value;
        match member.key.name.as_str() {
            "name" => match value.as_str() {
                Some(name) => name.clone_into(&mut case.name),
                None => out.push(shape(
                    value.span,
                    format!("`name` must be a string, found {}", value.kind_name()),
                )),
            },
            "description" => {}
            "vars" => match value.to_json() {
                Value::Object(vars) => {
                    case.vars = vars;
                    case.vars_span = value.span;
                }
                _ => out.push(shape(
                    value.span,
                    format!("`vars` must be an object, found {}", value.kind_name()),
                )),
            },
            "assert" => case.assertions = assertions(value, "assert", out),
            "threshold" => case.threshold = fraction(value, "threshold", out),
            other => out.push(unknown_key(
                &member.key,
                other,
                &["name", "vars", "assert", "threshold", "description"],
            )),
        }
    }
    Some(case)
}

/// A number from 0 to 1.
fn fraction(value: &Node, name: &str, out: &mut Vec<Diagnostic>) -> Option<f64> {
    match value.to_json().as_f64() {
        Some(n) if (0.0..=1.0).contains(&n) => Some(n),
        _ => {
            out.push(
                Diagnostic::new(
                    &INVALID_ASSERTION,
                    format!("`{name}` must be a number from 0 to 1"),
                )
                .at(value.span),
            );
            None
        }
    }
}

fn assertions(value: &Node, name: &str, out: &mut Vec<Diagnostic>) -> Vec<Assertion> {
    let Some(items) = value.as_array() else {
        out.push(shape(
            value.span,
            format!("`{name}` must be a list of assertions, found {}", value.kind_name()),
        ));
        return Vec::new();
    };
    items.iter().filter_map(|item| assertion(item, out)).collect()
}

fn assertion(node: &Node, out: &mut Vec<Diagnostic>) -> Option<Assertion> {
    let invalid = |message: String| Diagnostic::new(&INVALID_ASSERTION, message).at(node.span);
    let Some(members) = node.as_object() else {
        out.push(shape(
            node.span,
            format!("an assertion must be an object with a `type`, found {}", node.kind_name()),
        ));
        return None;
    };
    let field = |name: &str| members.iter().rev().find(|m| m.key.name == name).map(|m| &m.value);
    let Some(kind) = field("type").and_then(Node::as_str) else {
        out.push(invalid("an assertion needs a `type`".to_owned()));
        return None;
    };
    if !ASSERTION_TYPES.contains(&kind) {
        let mut diagnostic =
            Diagnostic::new(&UNKNOWN_ASSERTION, format!("unknown assertion type `{kind}`"))
                .at(field("type").map_or(node.span, |n| n.span));
        if let Some(near) = crate::suggest::closest(kind, ASSERTION_TYPES) {
            diagnostic = diagnostic.with_help(format!("did you mean `{near}`?"));
        }
        out.push(diagnostic);
        return None;
    }
    let value = field("value").map(Node::to_json);
    let text = || value.as_ref().and_then(Value::as_str).map(str::to_owned);
    let count = || value.as_ref().and_then(Value::as_u64);
    let ignore_case =
        field("ignore_case").map(Node::to_json).and_then(|v| v.as_bool()).unwrap_or(false);
    let threshold = match field("threshold") {
        Some(node) => fraction(node, "threshold", out)?,
        None if kind == "judge" => 0.5,
        None => 0.8,
    };
    let check = match kind {
        "equals" => text().map(Check::Equals),
        "one_of" => value
            .as_ref()
            .and_then(Value::as_array)
            .and_then(|items| {
                items.iter().map(|v| v.as_str().map(str::to_owned)).collect::<Option<Vec<_>>>()
            })
            .filter(|items| !items.is_empty())
            .map(Check::OneOf),
        "contains" => text().map(|text| Check::Contains { text, ignore_case }),
        "not_contains" => text().map(|text| Check::NotContains { text, ignore_case }),
        "starts_with" => text().map(Check::StartsWith),
        "regex" => match text() {
            Some(pattern) => match regex::Regex::new(&pattern) {
                Ok(_) => Some(Check::Regex(pattern)),
                Err(error) => {
                    // The regex crate's message draws the pattern over several lines; its
                    // last line says what is wrong.
                    let message = error.to_string();
                    let why = message
                        .lines()
                        .last()
                        .unwrap_or_default()
                        .trim_start_matches("error: ")
                        .to_owned();
                    out.push(invalid(format!("the regular expression does not compile: {why}")));
                    return None;
                }
            },
            None => None,
        },
        "json" => Some(Check::Json),
        "json_schema" => match value.clone() {
            Some(schema @ (Value::Object(_) | Value::Bool(_))) => {
                match jsonschema::validator_for(&schema) {
                    Ok(_) => Some(Check::JsonSchema(schema)),
                    Err(error) => {
                        out.push(invalid(format!("the JSON Schema is not valid: {error}")));
                        return None;
                    }
                }
            }
            _ => None,
        },
        "json_path" => {
            let path = field("path").and_then(Node::as_str).map(str::to_owned);
            match (path, value.clone()) {
                (Some(path), Some(value)) => match serde_json_path::JsonPath::parse(&path) {
                    Ok(_) => Some(Check::JsonPath { path, value }),
                    Err(error) => {
                        out.push(invalid(format!("`{path}` is not a JSON path: {error}")));
                        return None;
                    }
                },
                _ => {
                    out.push(invalid(
                        "`json_path` needs a `path` (like `$.answer`) and a `value`".to_owned(),
                    ));
                    return None;
                }
            }
        }
        "max_length" => count().map(Check::MaxLength),
        "max_tokens" => count().map(Check::MaxTokens),
        "max_latency_ms" => count().map(Check::MaxLatencyMs),
        "max_cost" => {
            value.as_ref().and_then(Value::as_f64).filter(|c| *c >= 0.0).map(Check::MaxCost)
        }
        "similar" => {
            let metric = match field("metric").and_then(Node::as_str) {
                None => Some(Metric::Levenshtein),
                Some(name) => Metric::parse(name),
            };
            let Some(metric) = metric else {
                out.push(invalid(format!("`metric` is one of {}", Metric::NAMES.join(", "))));
                return None;
            };
            text().map(|reference| Check::Similar { reference, metric, threshold })
        }
        "image_size" => {
            text().and_then(|size| crate::output::ImageSize::parse(&size)).map(Check::ImageSize)
        }
        "image_format" => text()
            .and_then(|name| crate::output::ImageFormat::from_name(&name))
            .map(Check::ImageFormat),
        "judge" => {
            let rubric = field("rubric").and_then(Node::as_str).map(str::to_owned).or_else(text);
            let model = field("model").and_then(Node::as_str).map(str::to_owned);
            rubric.map(|rubric| Check::Judge { rubric, model, threshold })
        }
        _ => None,
    };
    let Some(check) = check else {
        out.push(invalid(format!("`{kind}` needs {}", needs(kind))));
        return None;
    };
    let weight = match field("weight").map(Node::to_json) {
        None => 1.0,
        Some(weight) => match weight.as_f64() {
            Some(w) if w >= 0.0 && w.is_finite() => w,
            _ => {
                out.push(invalid("`weight` must be a number of 0 or more".to_owned()));
                return None;
            }
        },
    };
    Some(Assertion { check, weight, span: node.span })
}

/// What an assertion of type `kind` needs, for its message.
fn needs(kind: &str) -> &'static str {
    match kind {
        "one_of" => "a `value` that is a list of strings",
        "max_length" | "max_tokens" | "max_latency_ms" => "a `value` that is a whole number",
        "max_cost" => "a `value` in US dollars (0 or more)",
        "json_schema" => "a `value` that is a JSON Schema (an object)",
        "judge" => "a `rubric`: what a good answer does",
        "similar" => "a `value`: the reference text",
        "image_size" => "a `value` that is a size in pixels, such as `1024x1024`",
        "image_format" => "a `value` that is `png`, `jpeg` or `webp`",
        _ => "a `value` that is a string",
    }
}
