//! A `(gptel-make-tool ...)` or `(llm-make-tool ...)` form read back as a function tool: the
//! form is evaluated only as far as tool definitions go (`list`, `vector`, `concat`, quoted
//! data); the function stays opaque.

use serde_json::{Map, Value, json};

use super::reader::{BACKQUOTE, COMMA, Kind, Node, SPLICE, read_all};
use crate::codes::{DROPPED_FIELD, INVALID_SOURCE, LIST_FOR_VECTOR};
use crate::function::{Converted, FunctionTool};
use llmtool_format::diagnostic::Diagnostic;
use llmtool_format::span::Span;

const CONSTRUCTORS: [&str; 2] = ["gptel-make-tool", "llm-make-tool"];

type Result<T> = std::result::Result<T, Box<Diagnostic>>;

fn invalid(span: Span, message: impl Into<String>) -> Box<Diagnostic> {
    Box::new(Diagnostic::new(&INVALID_SOURCE, message).at(span))
}

/// The one tool that `text` defines.
pub(crate) fn read_tool(text: &str) -> Result<Converted<FunctionTool>> {
    let nodes = read_all(text)?;
    let mut forms = Vec::new();
    for node in &nodes {
        find_forms(node, &mut forms);
    }
    match forms.as_slice() {
        [] => Err(Box::new(Diagnostic::new(
            &INVALID_SOURCE,
            "no `(gptel-make-tool ...)` or `(llm-make-tool ...)` form in this file",
        ))),
        [form] => ToolReader::default().read(form),
        [_, second, ..] => Err(Box::new(
            Diagnostic::new(
                &INVALID_SOURCE,
                format!("this file defines {} tools; import reads one per file", forms.len()),
            )
            .at(second.span)
            .with_help("put each tool form in its own file"),
        )),
    }
}

/// The tool constructor calls in `node`, outermost first.
fn find_forms<'a>(node: &'a Node, forms: &mut Vec<&'a Node>) {
    if let Kind::List(items) = &node.kind {
        if items.first().and_then(Node::symbol).is_some_and(|head| CONSTRUCTORS.contains(&head)) {
            forms.push(node);
        } else {
            for item in items {
                find_forms(item, forms);
            }
        }
    }
}

#[derive(Default)]
struct ToolReader {
    diagnostics: Vec<Diagnostic>,
}

impl ToolReader {
    fn read(mut self, form: &Node) -> Result<Converted<FunctionTool>> {
        let Kind::List(items) = &form.kind else {
            return Err(invalid(form.span, "expected a tool form"));
        };
        let mut name = None;
        let mut description = String::new();
        let mut parameters = json!({ "type": "object", "properties": {}, "required": [] });
        for pair in items[1..].chunks(2) {
            let [key, value] = pair else {
                return Err(invalid(pair[0].span, "this key has no value"));
            };
            let Some(keyword) = key.symbol().filter(|_| key.is_keyword()) else {
                return Err(invalid(key.span, "expected a keyword such as `:name` here"));
            };
            match keyword {
                ":name" => name = Some(Self::string(value)?),
                ":description" => description = Self::string(value)?,
                ":args" => parameters = self.arguments(value)?,
                // The function is the user's code: it is not needed to describe the tool.
                ":function" => {}
                other => self.diagnostics.push(
                    Diagnostic::new(
                        &DROPPED_FIELD,
                        format!("`{other}` is not carried into the tool"),
                    )
                    .at(key.span.cover(value.span)),
                ),
            }
        }
        let Some(name) = name else {
            return Err(invalid(form.span, "the tool has no `:name`"));
        };
        let tool = FunctionTool { name, title: None, description, parameters, output: None };
        Ok(Converted { value: tool, diagnostics: self.diagnostics })
    }

    fn string(form: &Node) -> Result<String> {
        let value = evaluate(form)?;
        match value.kind {
            Kind::Str(text) => Ok(text),
            _ => Err(invalid(form.span, "expected a string")),
        }
    }

    /// `:args`: a list of argument plists, as the parameters' JSON Schema object.
    fn arguments(&mut self, form: &Node) -> Result<Value> {
        let value = evaluate(form)?;
        let arguments = match &value.kind {
            _ if value.is_nil() => &[][..],
            Kind::List(items) | Kind::Vector(items) => items.as_slice(),
            _ => return Err(invalid(form.span, "`:args` is a list of argument plists")),
        };
        let mut properties = Map::new();
        let mut required = Vec::new();
        for argument in arguments {
            let entries = plist(argument).ok_or_else(|| {
                invalid(argument.span, "an argument is a plist: `(:name \"x\" :type string ...)`")
            })?;
            let mut name = None;
            let mut optional = false;
            let mut schema = Map::new();
            for (key, value) in entries {
                match key {
                    "name" => {
                        name = Some(match &value.kind {
                            Kind::Str(text) => text.clone(),
                            Kind::Symbol(symbol) => symbol.trim_start_matches(':').to_owned(),
                            _ => return Err(invalid(value.span, "an argument's name is a string")),
                        });
                    }
                    "optional" => optional = !value.is_nil(),
                    _ => {
                        schema.insert(key.to_owned(), self.schema_value(key, value)?);
                    }
                }
            }
            let Some(name) = name else {
                return Err(invalid(argument.span, "this argument has no `:name`"));
            };
            if !optional {
                required.push(Value::String(name.clone()));
            }
            properties.insert(name, Value::Object(schema));
        }
        Ok(json!({ "type": "object", "properties": properties, "required": required }))
    }

    /// The JSON for the value of `key` in a schema plist.
    fn schema_value(&mut self, key: &str, node: &Node) -> Result<Value> {
        if node.is_nil() {
            return Ok(match key {
                "properties" | "$defs" | "definitions" => json!({}),
                "required" | "enum" => json!([]),
                _ => Value::Null,
            });
        }
        match (key, &node.kind) {
            ("properties" | "$defs" | "definitions", _) => {
                let entries = plist(node).ok_or_else(|| {
                    invalid(node.span, format!("`:{key}` is a plist of `:name (schema...)`"))
                })?;
                let mut map = Map::new();
                for (name, schema) in entries {
                    map.insert(name.to_owned(), self.schema(schema)?);
                }
                Ok(Value::Object(map))
            }
            ("items" | "not" | "additionalProperties", Kind::List(_)) => self.schema(node),
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Kind::Vector(items)) => {
                items.iter().map(|item| self.schema(item)).collect()
            }
            _ => self.data(node),
        }
    }

    fn schema(&mut self, node: &Node) -> Result<Value> {
        let entries = plist(node).ok_or_else(|| invalid(node.span, "a schema is a plist here"))?;
        let mut map = Map::new();
        for (key, value) in entries {
            map.insert(key.to_owned(), self.schema_value(key, value)?);
        }
        Ok(Value::Object(map))
    }

    /// Plain data, as `json-serialize` reads it.
    fn data(&mut self, node: &Node) -> Result<Value> {
        Ok(match &node.kind {
            Kind::Str(text) => Value::String(text.clone()),
            Kind::Integer(n) => Value::from(*n),
            Kind::Float(f) => serde_json::Number::from_f64(*f)
                .map(Value::Number)
                .ok_or_else(|| invalid(node.span, "not a number JSON can hold"))?,
            Kind::Symbol(name) => match name.as_str() {
                "t" => Value::Bool(true),
                "nil" | ":null" => Value::Null,
                ":json-false" | ":false" => Value::Bool(false),
                other => Value::String(other.to_owned()),
            },
            Kind::Vector(items) => {
                Value::Array(items.iter().map(|item| self.data(item)).collect::<Result<_>>()?)
            }
            Kind::List(items) => match plist(node) {
                Some(entries) => {
                    let mut map = Map::new();
                    for (key, value) in entries {
                        map.insert(key.to_owned(), self.data(value)?);
                    }
                    Value::Object(map)
                }
                None => {
                    self.diagnostics.push(
                        Diagnostic::new(
                            &LIST_FOR_VECTOR,
                            "a list where gptel and llm.el need a vector: read as an array",
                        )
                        .at(node.span)
                        .with_help("write `[...]`: both packages serialize a list as an object"),
                    );
                    Value::Array(items.iter().map(|item| self.data(item)).collect::<Result<_>>()?)
                }
            },
        })
    }
}

/// The `(key, value)` pairs of a plist, keys without their `:`; `None` when it is not one.
fn plist(node: &Node) -> Option<Vec<(&str, &Node)>> {
    let Kind::List(items) = &node.kind else { return None };
    if items.is_empty() || items.len() % 2 != 0 {
        return None;
    }
    items
        .chunks(2)
        .map(|pair| {
            let key = pair[0].symbol().filter(|_| pair[0].is_keyword())?;
            Some((&key[1..], &pair[1]))
        })
        .collect()
}

/// What `form` evaluates to, as far as tool definitions go.
fn evaluate(form: &Node) -> Result<Node> {
    match &form.kind {
        Kind::Str(_) | Kind::Integer(_) | Kind::Float(_) | Kind::Vector(_) => Ok(form.clone()),
        Kind::Symbol(name) if name == "t" || name == "nil" || form.is_keyword() => Ok(form.clone()),
        Kind::Symbol(name) => Err(invalid(
            form.span,
            format!("the value of variable `{name}` is not known here: write the value itself"),
        )),
        Kind::List(items) if items.is_empty() => Ok(form.clone()),
        Kind::List(items) => {
            let head = items[0].symbol().unwrap_or_default();
            let arguments = &items[1..];
            match head {
                "quote" if arguments.len() == 1 => Ok(arguments[0].clone()),
                BACKQUOTE | COMMA | SPLICE => Err(invalid(
                    form.span,
                    "backquote and `,` are not evaluated here: write the value literally, with `'` or `(list ...)`",
                )),
                "list" | "vector" => {
                    let values = arguments.iter().map(evaluate).collect::<Result<Vec<_>>>()?;
                    let kind =
                        if head == "list" { Kind::List(values) } else { Kind::Vector(values) };
                    Ok(Node { kind, span: form.span })
                }
                "concat" => {
                    let mut text = String::new();
                    for argument in arguments {
                        match evaluate(argument)?.kind {
                            Kind::Str(part) => text.push_str(&part),
                            _ => return Err(invalid(argument.span, "`concat` of a non-string")),
                        }
                    }
                    Ok(Node { kind: Kind::Str(text), span: form.span })
                }
                _ => Err(invalid(
                    form.span,
                    format!(
                        "`({head} ...)` is not evaluated here: only `list`, `vector`, `concat` and quoted data are"
                    ),
                )),
            }
        }
    }
}
