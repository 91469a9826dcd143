//! Human output in the style of rustc and ruff: `error[LT002]: message`, the file location, the
//! source lines with the span underlined, then help and fix lines.

use annotate_snippets::renderer::DecorStyle;
use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

use crate::diagnostic::{Diagnostic, Severity};
use crate::report::Source;
use crate::span::Span;

/// Spans on one line longer than this are underlined only for their first bytes, so that a
/// 40 KB base64 avatar does not print a 40 KB line of carets. JSON output keeps the full span.
const MAX_UNDERLINE: usize = 60;

/// The byte range of the whole lines that hold every span.
fn window(text: &str, spans: impl Iterator<Item = Span>) -> std::ops::Range<usize> {
    let (mut start, mut end) = (text.len(), 0);
    for span in spans {
        start = start.min(span.start.min(text.len()));
        end = end.max(span.end.min(text.len()));
    }
    let end = end.max(start);
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
    line_start..line_end
}

/// The part of `span` to underline: clamped to the text, and shortened when long and on one line.
fn shown_range(text: &str, span: Span) -> std::ops::Range<usize> {
    let start = span.start.min(text.len());
    let end = span.end.min(text.len()).max(start);
    let on_one_line = !text.as_bytes()[start..end].contains(&b'\n');
    if on_one_line && end - start > MAX_UNDERLINE {
        let cut = (start + MAX_UNDERLINE..end).find(|&i| text.is_char_boundary(i)).unwrap_or(end);
        return start..cut;
    }
    start..end
}

/// Renders `diagnostics` of `source`, each followed by a blank line.
pub fn human(source: &Source<'_>, diagnostics: &[Diagnostic], color: bool) -> String {
    let renderer =
        if color { Renderer::styled() } else { Renderer::plain() }.decor_style(DecorStyle::Ascii);
    let mut out = String::new();
    for diagnostic in diagnostics {
        out.push_str(&renderer.render(&[group(source, diagnostic)]));
        out.push_str("\n\n");
    }
    out
}

fn group<'a>(source: &'a Source<'a>, diagnostic: &'a Diagnostic) -> Group<'a> {
    let level = match diagnostic.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Info => Level::INFO,
    };
    let mut group = Group::with_title(
        level.primary_title(diagnostic.message.as_str()).id(diagnostic.rule.code),
    );
    if let Some(primary) = &diagnostic.primary {
        // Give the renderer only the lines the labels are on, not the whole file.
        let labels =
            std::iter::once(primary.span).chain(diagnostic.secondary.iter().map(|l| l.span));
        let window = window(source.text, labels);
        let line_start = source.line_column(window.start).line;
        let clamp = |span: Span| {
            let shown = shown_range(source.text, span);
            shown.start - window.start..shown.end - window.start
        };
        let mut snippet = Snippet::source(&source.text[window.clone()])
            .line_start(line_start)
            .path(source.path)
            .annotation(
                AnnotationKind::Primary.span(clamp(primary.span)).label(primary.message.as_deref()),
            );
        for label in &diagnostic.secondary {
            snippet = snippet.annotation(
                AnnotationKind::Context.span(clamp(label.span)).label(label.message.as_deref()),
            );
        }
        group = group.element(snippet);
    } else {
        group = group.element(Level::NOTE.message(format!("in {}", source.path)));
    }
    if let Some(help) = &diagnostic.help {
        group = group.element(Level::HELP.message(help.as_str()));
    }
    if let Some(fix) = &diagnostic.fix {
        let text = if fix.safe {
            format!("fix: {} (applied by `llmtool fmt --fix`)", fix.message)
        } else {
            format!("suggestion: {}", fix.message)
        };
        group = group.element(Level::NOTE.no_name().message(text));
    }
    group
}
