//! Edits the server offers: each diagnostic's fix as a quick fix, every safe fix at once (what
//! `fmt --fix` applies), and the canonical format of the whole file or of a range of it.

use std::collections::HashMap;

use llmtool_format::Span;
use llmtool_format::diagnostic::Edit;
use llmtool_format::format::{apply_safe_fixes, format_source};
use similar::{DiffOp, TextDiff};
use tower_lsp_server::ls_types::{
    self as lsp, CodeAction, CodeActionKind, CodeActionOrCommand, Range, TextEdit, Uri,
    WorkspaceEdit,
};

use crate::diagnostics;
use crate::files::OpenFile;

/// The kind of the action that applies every safe fix, for editors' "fix all on save".
pub fn fix_all_kind() -> CodeActionKind {
    CodeActionKind::new("source.fixAll.llmtool")
}

/// The quick fixes of the diagnostics that touch `range`, then the "fix all" action when any
/// safe fix exists.
pub fn code_actions(
    uri: &Uri,
    file: &OpenFile,
    range: Range,
    asked_about: &[lsp::Diagnostic],
) -> Vec<CodeActionOrCommand> {
    let text = file.text();
    let wanted = file.lines.span(text, range);
    let mut actions = Vec::new();
    for diagnostic in &file.document.diagnostics {
        let Some(fix) = &diagnostic.fix else { continue };
        let span = diagnostic.primary.as_ref().map_or(Span::empty(0), |l| l.span);
        let shown = diagnostics::to_lsp(uri, file, diagnostic);
        // In the range, or one of the diagnostics the client asks about (Neovim sends the
        // cursor as the range and the whole line's diagnostics).
        let in_range = span.start <= wanted.end && wanted.start <= span.end;
        let asked = asked_about.iter().any(|d| d.range == shown.range && d.code == shown.code);
        if !in_range && !asked {
            continue;
        }
        actions.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: fix.message.clone(),
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![shown]),
            edit: Some(workspace_edit(uri, text_edits(file, &fix.edits))),
            is_preferred: Some(fix.safe),
            ..CodeAction::default()
        }));
    }
    if let Some(edits) = fix_all(file) {
        actions.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: "Apply every safe fix (fmt --fix)".to_owned(),
            kind: Some(fix_all_kind()),
            edit: Some(workspace_edit(uri, edits)),
            ..CodeAction::default()
        }));
    }
    actions
}

/// The edits that apply every safe fix, as `fmt --fix` does before formatting; `None` when no
/// diagnostic has one.
pub fn fix_all(file: &OpenFile) -> Option<Vec<TextEdit>> {
    let (fixed, applied) = apply_safe_fixes(file.text(), &file.document.diagnostics);
    (applied > 0).then(|| changed_hunks(file, &fixed, None))
}

/// The canonical form of the file as edits, or of the part of it in `range`; `None` when the
/// file has a syntax problem (then it cannot be formatted without losing something).
pub fn format(file: &OpenFile, range: Option<Range>) -> Option<Vec<TextEdit>> {
    let formatted = format_source(file.text(), false).ok()?;
    let within = range.map(|r| file.lines.span(file.text(), r));
    Some(changed_hunks(file, &formatted.text, within))
}

/// The differences between the file and `new`, line by line, as edits; with `within`, only
/// the changed stretches that overlap it.
fn changed_hunks(file: &OpenFile, new: &str, within: Option<Span>) -> Vec<TextEdit> {
    let old = file.text();
    let diff = TextDiff::from_lines(old, new);
    // The diff's own lines (it also ends a line at a lone `\r`), so its indices always fit.
    let old_starts = line_offsets(diff.old_slices());
    let new_starts = line_offsets(diff.new_slices());
    let mut edits = Vec::new();
    for op in diff.ops() {
        let (old_lines, new_lines) = match *op {
            DiffOp::Equal { .. } => continue,
            DiffOp::Delete { old_index, old_len, new_index } => {
                (old_index..old_index + old_len, new_index..new_index)
            }
            DiffOp::Insert { old_index, new_index, new_len } => {
                (old_index..old_index, new_index..new_index + new_len)
            }
            DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                (old_index..old_index + old_len, new_index..new_index + new_len)
            }
        };
        let span = Span::new(old_starts[old_lines.start], old_starts[old_lines.end]);
        if within.is_some_and(|w| span.start > w.end || w.start > span.end) {
            continue;
        }
        let replacement = &new[new_starts[new_lines.start]..new_starts[new_lines.end]];
        edits.push(TextEdit::new(file.lines.range(old, span), replacement.to_owned()));
    }
    edits
}

/// The offset each line starts at, and the text's length last (one past the last line).
fn line_offsets(lines: &[&str]) -> Vec<usize> {
    std::iter::once(0)
        .chain(lines.iter().scan(0, |end, line| {
            *end += line.len();
            Some(*end)
        }))
        .collect()
}

pub fn text_edits(file: &OpenFile, edits: &[Edit]) -> Vec<TextEdit> {
    edits
        .iter()
        .map(|edit| {
            TextEdit::new(file.lines.range(file.text(), edit.span), edit.replacement.clone())
        })
        .collect()
}

pub fn workspace_edit(uri: &Uri, edits: Vec<TextEdit>) -> WorkspaceEdit {
    WorkspaceEdit {
        changes: Some(HashMap::from([(uri.clone(), edits)])),
        ..WorkspaceEdit::default()
    }
}
