//! `check`'s diagnostics as the editor shows them: the same codes, messages and spans.

use llmtool_format::{Diagnostic, Severity};
use tower_lsp_server::ls_types::{
    self as lsp, CodeDescription, DiagnosticRelatedInformation, DiagnosticSeverity, Location,
    NumberOrString, Uri,
};

use crate::files::OpenFile;

/// Every diagnostic of `file`, for `publishDiagnostics`; none for a file that is not a tool.
pub fn of(uri: &Uri, file: &OpenFile) -> Vec<lsp::Diagnostic> {
    if !file.is_tool {
        return Vec::new();
    }
    file.document.diagnostics.iter().map(|d| to_lsp(uri, file, d)).collect()
}

pub fn to_lsp(uri: &Uri, file: &OpenFile, diagnostic: &Diagnostic) -> lsp::Diagnostic {
    let text = file.text();
    let span = diagnostic.primary.as_ref().map_or(llmtool_format::Span::empty(0), |l| l.span);
    let mut message = diagnostic.message.clone();
    if let Some(help) = &diagnostic.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let related: Vec<DiagnosticRelatedInformation> = diagnostic
        .secondary
        .iter()
        .map(|label| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), file.lines.range(text, label.span)),
            message: label.message.clone().unwrap_or_else(|| "related".to_owned()),
        })
        .collect();
    lsp::Diagnostic {
        range: file.lines.range(text, span),
        severity: Some(match diagnostic.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Info => DiagnosticSeverity::INFORMATION,
        }),
        code: Some(NumberOrString::String(diagnostic.code().to_owned())),
        code_description: rule_page(diagnostic.code()),
        source: Some("llmtool".to_owned()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..lsp::Diagnostic::default()
    }
}

/// The rule's entry in `docs/diagnostics.md` on the project's repository.
fn rule_page(code: &str) -> Option<CodeDescription> {
    let page = format!(
        "{}/blob/main/docs/diagnostics.md#{}",
        env!("CARGO_PKG_REPOSITORY"),
        code.to_ascii_lowercase()
    );
    Some(CodeDescription { href: page.parse().ok()? })
}
