//! Completion: the keys an object takes (with their documentation), the values an enum allows
//! (variable types with the Spanish and Korean editions' names, DLP policies), a variable's
//! allowed values inside its `default`, model names from the price table, and the declared
//! variables after `{{` in the prompt.

use llmtool_format::Span;
use llmtool_format::model::VariableKind;
use llmtool_format::syntax::quote;
use llmtool_providers::pricing::PriceTable;
use tower_lsp_server::ls_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, MarkupContent,
    MarkupKind, TextEdit,
};

use crate::context::{self, Place, Slot, Step};
use crate::files::OpenFile;
use crate::{navigation, schema};

/// The characters after which editors should ask for completions.
pub const TRIGGERS: [&str; 3] = ["\"", "{", ":"];

pub fn at(file: &OpenFile, offset: usize, prices: &PriceTable) -> Vec<CompletionItem> {
    if let Some(items) = placeholder_names(file, offset) {
        return items;
    }
    let Some(place) = context::place_at(file.text(), offset) else { return Vec::new() };
    // What the completion replaces: the string being typed (and a closing quote the editor
    // put after the cursor), or nothing at the cursor.
    let replaced = match place.literal {
        Some(open) if open.end == offset && file.text()[offset..].starts_with('"') => {
            Span::new(open.start, offset + 1)
        }
        Some(literal) => literal,
        None => Span::empty(offset),
    };
    let item = |label: &str, kind, detail: Option<String>, doc: Option<&str>, insert: String| {
        CompletionItem {
            label: label.to_owned(),
            kind: Some(kind),
            detail,
            documentation: doc.map(|d| {
                Documentation::MarkupContent(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: d.to_owned(),
                })
            }),
            filter_text: Some(quote(label)),
            text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(
                file.lines.range(file.text(), replaced),
                insert,
            ))),
            ..CompletionItem::default()
        }
    };
    match place.slot {
        Slot::Key => schema::keys(&place.path)
            .into_iter()
            .filter(|(key, _)| !place.siblings.iter().any(|s| s == key))
            .map(|(key, doc)| {
                let insert =
                    if place.literal.is_some() { quote(key) } else { format!("{}: ", quote(key)) };
                item(key, CompletionItemKind::PROPERTY, None, doc, insert)
            })
            .collect(),
        Slot::Value => values(file, &place, prices)
            .into_iter()
            .map(|(value, detail)| {
                item(&value, CompletionItemKind::VALUE, detail, None, quote(&value))
            })
            .collect(),
    }
}

/// The values that fit the place, each with a note.
fn values(file: &OpenFile, place: &Place, prices: &PriceTable) -> Vec<(String, Option<String>)> {
    let variable_at = |path: &[Step]| match path {
        [Step::Key(m), Step::Key(v), Step::Index(i), ..] if m == "metadata" && v == "variables" => {
            file.document.tool.as_ref()?.variables().get(*i)
        }
        _ => None,
    };
    if place.is(&["metadata", "variables", "*", "default"])
        || place.is(&["metadata", "variables", "*", "default", "*"])
    {
        let Some(variable) = variable_at(&place.path) else { return Vec::new() };
        return variable
            .allowed()
            .map(|v| (v.to_owned(), Some("allowed value".to_owned())))
            .collect();
    }
    if place.is(&["metadata", "model_version"]) || place.is(&["metadata", "model_version", "*"]) {
        return prices
            .known_models()
            .into_iter()
            .map(|(provider, model)| (model, Some(provider)))
            .collect();
    }
    schema::enum_values(&place.path)
        .into_iter()
        .map(|value| {
            let note = VariableKind::from_name(value)
                .filter(|(_, translated)| *translated)
                .map(|(kind, _)| format!("translated name of `{kind}`; llmtool writes `{kind}`"));
            (value.to_owned(), note)
        })
        .collect()
}

/// After `{{` in the prompt: the declared variables, completed with `}}`.
fn placeholder_names(file: &OpenFile, offset: usize) -> Option<Vec<CompletionItem>> {
    let tool = file.document.tool.as_ref()?;
    let prompt = tool.model_prompt.as_ref()?;
    if !(prompt.span.start < offset && offset < prompt.span.end) {
        return None;
    }
    let before = &file.text()[prompt.span.start..offset];
    let open = before.rfind("{{")?;
    let typed = &before[open + 2..];
    if typed.contains("}}") || typed.contains('"') {
        return None;
    }
    let start = prompt.span.start + open + 2;
    // The rest of the placeholder the cursor is in (`{{to|pic}}`) is replaced too: its name's
    // other part and its braces, on this line, with no brace, quote or escape in between.
    let after = &file.text()[offset..prompt.span.end];
    let rest = after
        .find("}}")
        .filter(|&end| !after[..end].contains(['{', '}', '"', '\\', '\n']))
        .map_or(0, |end| end + 2);
    let replaced = Span::new(start, offset + rest);
    let items = tool
        .variables()
        .iter()
        .map(|variable| {
            let name = variable.name.value.trim();
            CompletionItem {
                label: name.to_owned(),
                kind: Some(CompletionItemKind::VARIABLE),
                detail: Some(variable.kind().as_str().to_owned()),
                documentation: Some(Documentation::MarkupContent(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: navigation::describe_variable(variable),
                })),
                text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(
                    file.lines.range(file.text(), replaced),
                    format!("{}}}}}", navigation::written_in_string(name)),
                ))),
                ..CompletionItem::default()
            }
        })
        .collect();
    Some(items)
}
