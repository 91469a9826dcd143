//! A function tool as a `(gptel-make-tool ...)` or `(llm-make-tool ...)` form.

use serde_json::{Map, Value};

use super::printer::{self, Doc, schema_entries};
use super::{ElispFlavor, ElispOptions, GPTEL_CATEGORY};
use crate::codes::REWRITTEN_SCHEMA;
use crate::function::FunctionTool;
use llmtool_format::diagnostic::Diagnostic;

/// Keys of an argument that llm.el sends; it leaves the others in the form but out of requests.
const LLM_EL_SENT: [&str; 5] = ["type", "description", "enum", "items", "properties"];

/// The form for `tool`, with warnings about what the package will not send.
pub(crate) fn tool_form(
    tool: &FunctionTool,
    flavor: ElispFlavor,
    options: &ElispOptions,
) -> (String, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let mut out = format!("({}\n", flavor.constructor());
    out.push_str(&format!(" :name {}\n", printer::string(&tool.name)));
    out.push_str(&format!(" :description {}\n", printer::string(&tool.description)));
    let arguments = arguments(&tool.parameters, flavor, &mut diagnostics);
    if !arguments.is_empty() {
        let lead = " :args (list ";
        let indent = " ".repeat(lead.len());
        out.push_str(lead);
        out.push_str(&arguments.join(&format!("\n{indent}")));
        out.push_str(")\n");
    }
    out.push_str(&format!(" :function {}", function(tool, options)));
    if options.asynchronous {
        out.push_str("\n :async t");
    }
    // gptel's own options: llm.el has none of them.
    if flavor == ElispFlavor::Gptel {
        if options.confirm {
            out.push_str("\n :confirm t");
        }
        if options.include {
            out.push_str("\n :include t");
        }
        if options.function.is_none() && options.runner.is_some() {
            out.push_str(&format!("\n :category {}", printer::string(GPTEL_CATEGORY)));
        }
    }
    out.push_str(")\n");
    (out, diagnostics)
}

/// The `:function`: the symbol given, the lambda that runs the tool through `llmtool call`,
/// or a stub that says it needs replacing.
fn function(tool: &FunctionTool, options: &ElispOptions) -> String {
    if let Some(symbol) = &options.function {
        return format!("#'{}", printer::symbol(symbol));
    }
    if let Some(reference) = &options.runner {
        // The values come in the order of `:args`, which is the properties' order.
        let keys: Vec<&str> = tool.parameters["properties"]
            .as_object()
            .map(|properties| properties.keys().map(String::as_str).collect())
            .unwrap_or_default();
        return super::runner::lambda(reference, &keys, options.asynchronous);
    }
    let callback = if options.asynchronous { "_callback " } else { "" };
    format!(
        "(lambda ({callback}&rest _args)\n             (error \"Tool %s has no function yet: replace this lambda\" {}))",
        printer::string(&tool.name)
    )
}

/// One quoted plist per parameter: `'(:name "x" :type string ... :optional t)`.
fn arguments(
    parameters: &Value,
    flavor: ElispFlavor,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<String> {
    let empty = Map::new();
    let object = parameters.as_object().unwrap_or(&empty);
    for key in object.keys() {
        if !matches!(key.as_str(), "type" | "properties" | "required") {
            diagnostics.push(Diagnostic::new(
                &REWRITTEN_SCHEMA,
                format!("the parameters' `{key}` has no place in the :args list and is left out"),
            ));
        }
    }
    let required: Vec<&str> = parameters["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = parameters["properties"].as_object().unwrap_or(&empty);
    properties
        .iter()
        .map(|(name, schema)| {
            let schema = schema.as_object().unwrap_or(&empty);
            check_argument(name, schema, flavor, diagnostics);
            let mut entries = vec![(":name".to_owned(), Doc::Atom(printer::string(name)))];
            entries.extend(schema_entries(schema));
            if !required.contains(&name.as_str()) {
                entries.push((":optional".into(), Doc::Atom("t".into())));
            }
            // Each argument starts after ` :args (list '`.
            format!("'{}", Doc::Plist(entries).layout(" :args (list '".len()))
        })
        .collect()
}

/// Warnings for what gptel or llm.el cannot take in an argument.
fn check_argument(
    name: &str,
    schema: &Map<String, Value>,
    flavor: ElispFlavor,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let mut warn = |message: String| diagnostics.push(Diagnostic::new(&REWRITTEN_SCHEMA, message));
    match schema.get("type") {
        Some(Value::String(_)) => {}
        Some(_) => warn(format!(
            "parameter `{name}` has several types; {} needs one symbol in :type",
            flavor.package()
        )),
        None => warn(format!("parameter `{name}` has no type; {} needs a :type", flavor.package())),
    }
    if flavor == ElispFlavor::LlmEl {
        for key in schema.keys().filter(|k| !LLM_EL_SENT.contains(&k.as_str())) {
            warn(format!(
                "llm.el sends only the type, description, enum, items and properties of an argument: `{key}` of `{name}` stays in the form but is not sent"
            ));
        }
    }
}
