//! A tool's expected output in a promptfoo export: the test `transform` that enforces it on the
//! model's answer before the assertions see it (`promptfoo_output.js`, given the tool's spec),
//! as `llmtool test` enforces it before its own.

use crate::codes::DROPPED_FIELD;
use llmtool_format::diagnostic::Diagnostic;
use llmtool_format::output::{OutputFormat, OutputKind, OutputSpec, language_aliases};

/// How the enforcing code starts, so that an import knows it.
pub(super) const MARK: &str = "// llmtool's expected output";

/// The enforcing code, with `__SPEC__` where the spec goes.
const ENFORCE: &str = include_str!("promptfoo_output.js");

/// The `transform` for a tool whose expected output is `spec`; `None` when the answer is
/// taken as it is (plain text).
pub(super) fn transform(spec: &OutputSpec, diagnostics: &mut Vec<Diagnostic>) -> Option<String> {
    let (kind, language, allowed) = match &spec.kind {
        OutputKind::Limited { allowed } => ("limited", None, allowed.clone()),
        OutputKind::Code { language } => ("code", language.clone(), Vec::new()),
        _ => ("text", None, Vec::new()),
    };
    let format = match &spec.format {
        Some(OutputFormat::Json) => Some("json"),
        Some(OutputFormat::Xml) => Some("xml"),
        Some(OutputFormat::Csv) => Some("csv"),
        _ => None,
    };
    if kind == "text" && format.is_none() {
        return None;
    }
    if let Some(format @ ("xml" | "csv")) = format {
        let what = if format == "xml" { "well-formed XML" } else { "consistent CSV" };
        diagnostics.push(Diagnostic::new(
            &DROPPED_FIELD,
            format!("promptfoo is given the answer out of its fence, but nothing there checks that it is {what}: an answer that is not fails in `llmtool test` only"),
        ));
    }
    let aliases: Vec<String> = language
        .as_deref()
        .map(|language| language_aliases(&language.to_ascii_lowercase()).to_vec())
        .unwrap_or_default()
        .into_iter()
        .map(str::to_owned)
        .collect();
    let spec = format!(
        "{{ kind: {}, language: {}, aliases: {}, allowed: {}, format: {} }}",
        js_string(kind),
        language.as_deref().map_or_else(|| "null".to_owned(), js_string),
        js_list(&aliases),
        js_list(&allowed),
        format.map_or_else(|| "null".to_owned(), js_string),
    );
    Some(ENFORCE.replace("__SPEC__", &spec))
}

/// `text` as a JavaScript string literal with no brace in it (`\u007b` is `{`), so that the
/// code means the same should promptfoo render it as a template first.
fn js_string(text: &str) -> String {
    let literal = serde_json::to_string(text).unwrap_or_default();
    literal.replace('{', "\\u007b").replace('}', "\\u007d")
}

fn js_list(texts: &[String]) -> String {
    let items: Vec<String> = texts.iter().map(|text| js_string(text)).collect();
    format!("[{}]", items.join(", "))
}
