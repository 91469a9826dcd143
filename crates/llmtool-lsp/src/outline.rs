//! The document's outline: the prompt, the metadata, and each variable under it.

use llmtool_format::Span;
use tower_lsp_server::ls_types::{DocumentSymbol, SymbolKind};

use crate::files::OpenFile;

#[allow(deprecated)] // `DocumentSymbol::deprecated` has to be written, as `None`.
fn symbol(
    file: &OpenFile,
    name: &str,
    detail: Option<String>,
    kind: SymbolKind,
    span: Span,
    name_span: Span,
    children: Vec<DocumentSymbol>,
) -> DocumentSymbol {
    DocumentSymbol {
        name: name.to_owned(),
        detail,
        kind,
        tags: None,
        deprecated: None,
        range: file.lines.range(file.text(), span),
        selection_range: file.lines.range(file.text(), name_span),
        children: (!children.is_empty()).then_some(children),
    }
}

pub fn symbols(file: &OpenFile) -> Vec<DocumentSymbol> {
    let Some(tool) = &file.document.tool else { return Vec::new() };
    let mut out = Vec::new();
    if let Some(prompt) = &tool.model_prompt {
        let words = prompt.value.split_whitespace().count();
        let detail = Some(format!("{words} words"));
        out.push(symbol(
            file,
            "model_prompt",
            detail,
            SymbolKind::STRING,
            prompt.span,
            prompt.span,
            vec![],
        ));
    }
    if let Some(metadata) = &tool.metadata {
        let variables: Vec<DocumentSymbol> = tool
            .variables()
            .iter()
            .map(|v| {
                let detail = Some(v.kind().as_str().to_owned());
                symbol(
                    file,
                    v.name.value.trim(),
                    detail,
                    SymbolKind::VARIABLE,
                    v.span,
                    v.name.span,
                    vec![],
                )
            })
            .collect();
        let name = metadata.prompt_name.as_ref().map(|n| n.value.clone());
        out.push(symbol(
            file,
            "metadata",
            name,
            SymbolKind::OBJECT,
            metadata.span,
            metadata.span,
            variables,
        ));
    }
    out
}
