//! Human output in the style of rustc and ruff: `error[LT002]: message`, the file location, the
//! source lines with the span underlined, then help and fix lines.

use annotate_snippets::renderer::DecorStyle;
use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

use crate::diagnostic::{Diagnostic, Severity};
use crate::report::Source;

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
        let clamp = |r: std::ops::Range<usize>| {
            r.start.min(source.text.len())..r.end.min(source.text.len())
        };
        let mut snippet = Snippet::source(source.text).path(source.path).annotation(
            AnnotationKind::Primary
                .span(clamp(primary.span.range()))
                .label(primary.message.as_deref()),
        );
        for label in &diagnostic.secondary {
            snippet = snippet.annotation(
                AnnotationKind::Context
                    .span(clamp(label.span.range()))
                    .label(label.message.as_deref()),
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
