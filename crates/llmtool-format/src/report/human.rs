//! Human output in the style of rustc and ruff: `error[LT002]: message`, the file location, the
//! source lines with the span underlined, then help and fix lines.

use annotate_snippets::renderer::DecorStyle;
use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

use crate::diagnostic::{Diagnostic, Fix, Label, Severity};
use crate::report::Source;
use crate::span::Span;

mod one_line;

/// Spans on one line longer than this are underlined only for their first bytes, so that a
/// 40 KB base64 avatar does not print a 40 KB line of carets. JSON output keeps the full span.
const MAX_UNDERLINE: usize = 60;

/// The most source text one snippet shows. Labels farther apart get a snippet each, and a
/// line longer than this (a prompt of a megabyte is one JSON line) is shown in part, so that
/// rendering many diagnostics stays linear in their number, not in their number times the
/// file's size.
const MAX_WINDOW: usize = 16 * 1024;

/// How much of a long line is shown on each side of a label.
const LONG_LINE_CONTEXT: usize = 60;

/// How many characters of a line past its last underline the renderer is given. It shows at
/// most 140 columns of a line, and a character takes at least one, so what lies beyond cannot
/// appear; cutting it keeps a line of a base64 avatar from being measured character by
/// character for nothing. The margin past 140 keeps a cut line longer than the renderer's
/// width, so it still marks it as cut.
const PAST_LAST_LABEL: usize = 160;

/// The byte range of the whole lines that hold every span.
fn window(source: &Source<'_>, spans: impl Iterator<Item = Span>) -> std::ops::Range<usize> {
    let text = source.text;
    let (mut start, mut end) = (text.len(), 0);
    for span in spans {
        start = start.min(span.start.min(text.len()));
        end = end.max(span.end.min(text.len()));
    }
    let end = end.max(start);
    source.line_range(start).start..source.line_range(end).end
}

/// The nearest character boundary at or before `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    (0..=at.min(text.len())).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0)
}

/// The nearest character boundary at or after `at`.
fn ceil_boundary(text: &str, at: usize) -> usize {
    (at.min(text.len())..=text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len())
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
    // A report is a few hundred bytes: room for that many is made once (at most a megabyte
    // ahead, however many diagnostics a file has).
    let mut out = String::with_capacity(diagnostics.len().saturating_mul(512).min(1 << 20));
    for diagnostic in diagnostics {
        let direct = if color { None } else { one_line::render(source, diagnostic) };
        match direct {
            Some(report) => out.push_str(&report),
            None => out.push_str(&renderer.render(&[group(source, diagnostic)])),
        }
        out.push_str("\n\n");
    }
    out
}

/// The part of `window` (whole lines) given to the renderer: up to [`PAST_LAST_LABEL`]
/// characters past the end of the last underline.
fn cut_window(
    source: &Source<'_>,
    window: std::ops::Range<usize>,
    labels: impl Iterator<Item = Span>,
) -> std::ops::Range<usize> {
    let last_shown = labels.map(|span| shown_range(source.text, span).end);
    let last_shown = ceil_boundary(source.text, last_shown.max().unwrap_or(window.start));
    let past = source.text[last_shown..].char_indices().nth(PAST_LAST_LABEL);
    window.start..window.end.min(past.map_or(usize::MAX, |(at, _)| last_shown + at))
}

/// The note of a fix: a safe one says `fmt --fix` applies it.
fn fix_note(fix: &Fix) -> String {
    if fix.safe {
        format!("fix: {} (applied by `llmtool fmt --fix`)", fix.message)
    } else {
        format!("suggestion: {}", fix.message)
    }
}

/// The lines of `window`, with `labels` underlined.
fn snippet<'a>(
    source: &'a Source<'a>,
    window: std::ops::Range<usize>,
    labels: &[(AnnotationKind, &'a Label)],
) -> Snippet<'a, annotate_snippets::Annotation<'a>> {
    let line_start = source.line_column(window.start).line;
    let window = cut_window(source, window, labels.iter().map(|(_, label)| label.span));
    let clamp = |span: Span| {
        let shown = shown_range(source.text, span);
        shown.start - window.start..shown.end - window.start
    };
    let mut snippet =
        Snippet::source(&source.text[window.clone()]).line_start(line_start).path(source.path);
    for (kind, label) in labels {
        snippet =
            snippet.annotation((*kind).span(clamp(label.span)).label(label.message.as_deref()));
    }
    snippet
}

/// A label on a line longer than [`MAX_WINDOW`]: the primary one shows an excerpt of the line
/// around it, then its location; a secondary one, its location alone.
fn long_line<'a>(
    group: Group<'a>,
    source: &'a Source<'a>,
    (kind, label): &(AnnotationKind, &'a Label),
    first: bool,
) -> Group<'a> {
    let text = source.text;
    let at = source.line_column(label.span.start);
    let location = format!("{}:{}:{}", source.path, at.line, at.column);
    if !first {
        let what = label.message.as_deref().unwrap_or("see");
        return group.element(Level::NOTE.message(format!("{what}: {location}")));
    }
    let line = source.line_range(label.span.start);
    // A span that runs on past its first line is underlined to the end of that line only.
    let shown = shown_range(text, label.span);
    let shown = shown.start..shown.end.min(line.end).max(shown.start);
    let from = floor_boundary(text, shown.start.saturating_sub(LONG_LINE_CONTEXT)).max(line.start);
    let to = ceil_boundary(text, shown.end + LONG_LINE_CONTEXT).min(line.end).max(shown.end);
    let (head, tail) =
        (if from > line.start { "..." } else { "" }, if to < line.end { "..." } else { "" });
    let excerpt = format!("{head}{}{tail}", &text[from..to]);
    let underline = shown.start - from + head.len()..shown.end - from + head.len();
    let snippet = Snippet::source(excerpt)
        .line_start(at.line)
        .annotation((*kind).span(underline).label(label.message.as_deref()));
    group
        .element(snippet)
        .element(Level::NOTE.message(format!("at {location} (a long line, shown in part)")))
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
        let labels: Vec<(AnnotationKind, &Label)> =
            std::iter::once((AnnotationKind::Primary, primary))
                .chain(diagnostic.secondary.iter().map(|l| (AnnotationKind::Context, l)))
                .collect();
        // Give the renderer only the lines the labels are on, not the whole file.
        let together = window(source, labels.iter().map(|(_, l)| l.span));
        if together.len() <= MAX_WINDOW {
            group = group.element(snippet(source, together, &labels));
        } else {
            for (index, label) in labels.iter().enumerate() {
                let alone = window(source, std::iter::once(label.1.span));
                if alone.len() <= MAX_WINDOW {
                    group = group.element(snippet(source, alone, std::slice::from_ref(label)));
                } else {
                    group = long_line(group, source, label, index == 0);
                }
            }
        }
    } else {
        group = group.element(Level::NOTE.message(format!("in {}", source.path)));
    }
    if let Some(help) = &diagnostic.help {
        group = group.element(Level::HELP.message(help.as_str()));
    }
    if let Some(fix) = &diagnostic.fix {
        group = group.element(Level::NOTE.no_name().message(fix_note(fix)));
    }
    group
}

#[cfg(test)]
mod tests {
    use super::*;
    // Any rule will do: the report's layout is what is tested.
    use crate::syntax::codes::{DUPLICATE_KEY, UNEXPECTED_TOKEN};

    #[test]
    fn a_label_on_a_very_long_line_shows_an_excerpt_and_its_location() {
        let line = format!("\"{}{{{{u}}}} and more{}\"", "x".repeat(40_000), "y".repeat(40_000));
        let text = format!("{{\n  \"model_prompt\": {line}\n}}\n");
        let start = text.find("{{u}}").unwrap_or_default();
        let source = Source::new("tool.json", &text);
        let diagnostic = Diagnostic::new(&UNEXPECTED_TOKEN, "`{{u}}` is not declared")
            .at(Span::new(start, start + 5));
        let shown = human(&source, &[diagnostic], false);
        assert!(shown.len() < 1000, "{} bytes", shown.len());
        assert!(shown.contains("2 | ...xxxx") && shown.contains("x{{u}} and moreyyyy"), "{shown}");
        assert!(shown.contains("^^^^^"), "{shown}");
        assert!(shown.contains("at tool.json:2:40020 (a long line, shown in part)"), "{shown}");
    }

    #[test]
    fn labels_far_apart_get_a_snippet_each() {
        let filler = "\n".repeat(MAX_WINDOW);
        let text = format!("{{\"name\": \"a\"}}{filler}{{\"name\": \"a\"}}\n");
        let first = text.find("\"a\"").unwrap_or_default();
        let second = text.rfind("\"a\"").unwrap_or_default();
        let source = Source::new("tool.json", &text);
        let diagnostic = Diagnostic::new(&DUPLICATE_KEY, "variable `a` is declared twice")
            .at_labelled(Span::new(second, second + 3), "declared again here")
            .with_secondary(Span::new(first, first + 3), "first declared here");
        let shown = human(&source, &[diagnostic], false);
        assert!(shown.len() < 1000, "{} bytes", shown.len());
        assert!(shown.contains("--> tool.json:16385:10"), "{shown}");
        assert!(shown.contains("::: tool.json:1:10"), "{shown}");
    }
}
