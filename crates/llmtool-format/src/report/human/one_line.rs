//! The most common report written directly: one label, on one line of printable ASCII, in
//! plain text.
//!
//! `annotate_snippets` lays out any report (several labels, spans over lines, wide characters,
//! tabs, colour) on a grid of styled characters. For this case its output comes down to a
//! few lines of text, and building the grid took a tenth of `check`'s time on a corpus of
//! 10,000 files (2,517 reports). [`render`] writes those lines itself and declines everything
//! else, which the renderer then lays out; the differential test below holds the two to the
//! same bytes over random reports.

use crate::diagnostic::{Diagnostic, Severity};
use crate::report::Source;

use super::{cut_window, fix_note, shown_range};

/// How many columns `annotate_snippets` gives a report (its default terminal width).
const TERM_WIDTH: usize = 140;

/// How far a line may be indented for the renderer to show it from its first column; past
/// that, it trims the indentation and marks the cut.
const MAX_INDENT: usize = 6;

/// The report of `diagnostic`, if it is one this writes: else `None`, and the renderer does.
pub(super) fn render(source: &Source<'_>, diagnostic: &Diagnostic) -> Option<String> {
    let label = diagnostic.primary.as_ref()?;
    let plain = |text: &str| !text.chars().any(char::is_control);
    let texts = [Some(diagnostic.message.as_str()), diagnostic.help.as_deref()];
    if !diagnostic.secondary.is_empty()
        || !texts.into_iter().flatten().all(plain)
        || !diagnostic.fix.as_ref().is_none_or(|fix| plain(&fix.message))
    {
        return None;
    }
    let note = label.message.as_deref().unwrap_or_default();
    let line = source.line_range(label.span.start);
    let underline = shown_range(source.text, label.span);
    let window = cut_window(source, line.clone(), std::iter::once(label.span));
    let code = &source.text[window.clone()];
    let printable = |text: &str| text.bytes().all(|b| (b' '..=b'~').contains(&b));
    if underline.end > window.end
        || code.is_empty()
        || code.ends_with(' ')
        || !printable(code)
        || !printable(note)
    {
        return None;
    }
    let (start, width) = (underline.start - window.start, underline.len().max(1));
    let line_number = source.line_column(label.span.start).line.to_string();
    let gutter = " ".repeat(line_number.len() + 1);
    let room = TERM_WIDTH.checked_sub(line_number.len() + 3)?;
    let indent = code.bytes().take_while(|&b| b == b' ').count();
    // The renderer leaves a column for a label's text even when the text is empty.
    let label_end = start + width + label.message.as_ref().map_or(0, |note| 1 + note.len());
    if indent > MAX_INDENT || label_end + MAX_INDENT > room {
        return None;
    }
    let shown =
        if code.len() <= room { code.to_owned() } else { format!("{}...", &code[..room - 3]) };

    let level = match diagnostic.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "info",
    };
    let mut out = format!(
        "{level}[{code}]: {message}\n{arrow}--> {path}:{line_number}:{column}\n{gutter}|\n\
         {line_number} | {shown}\n{gutter}| {pad}{carets}",
        code = diagnostic.rule.code,
        message = diagnostic.message,
        arrow = &gutter[1..],
        path = source.path,
        column = start + 1,
        pad = " ".repeat(start),
        carets = "^".repeat(width),
    );
    if !note.is_empty() {
        out.push(' ');
        out.push_str(note);
    }
    if diagnostic.help.is_some() || diagnostic.fix.is_some() {
        out.push_str(&format!("\n{gutter}|"));
    }
    if let Some(help) = &diagnostic.help {
        out.push_str(&format!("\n{gutter}= help: {help}"));
    }
    if let Some(fix) = &diagnostic.fix {
        out.push_str(&format!("\n{gutter}= {}", fix_note(fix)));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use annotate_snippets::Renderer;
    use annotate_snippets::renderer::DecorStyle;
    use proptest::prelude::*;

    use super::*;
    use crate::diagnostic::Fix;
    use crate::span::Span;
    use crate::syntax::codes::{COMMENT, UNEXPECTED_TOKEN};

    /// What `annotate_snippets` renders for `diagnostic`.
    fn laid_out(source: &Source<'_>, diagnostic: &Diagnostic) -> String {
        let renderer = Renderer::plain().decor_style(DecorStyle::Ascii);
        renderer.render(&[super::super::group(source, diagnostic)])
    }

    /// A file of `before` lines, then `indent` spaces and `body`, then `after` lines.
    fn file(before: usize, indent: usize, body: &str, after: usize) -> String {
        let mut text = "{\n".repeat(before);
        text.push_str(&" ".repeat(indent));
        text.push_str(body);
        text.push('\n');
        text.push_str(&"  \"x\": 1,\n".repeat(after));
        text
    }

    fn report(
        span: Span,
        note: Option<String>,
        help: Option<String>,
        fix: Option<bool>,
    ) -> Diagnostic {
        let mut diagnostic = Diagnostic::new(&UNEXPECTED_TOKEN, "something is off here");
        diagnostic = match note {
            Some(note) => diagnostic.at_labelled(span, note),
            None => diagnostic.at(span),
        };
        diagnostic.help = help;
        diagnostic.fix = fix.map(|safe| Fix { message: "do it".into(), edits: Vec::new(), safe });
        diagnostic
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn writes_what_annotate_snippets_lays_out(
            before in prop_oneof![Just(0usize), Just(3), Just(12), Just(150)],
            indent in 0usize..12,
            body in "[ -~]{1,400}",
            after in 0usize..3,
            from in 0usize..420,
            length in 0usize..90,
            note in proptest::option::of("[ -~]{0,30}"),
            help in proptest::option::of("[^\\p{C}]{0,60}"),
            fix in proptest::option::of(any::<bool>()),
        ) {
            let text = file(before, indent, &body, after);
            let line_start = 2 * before;
            let line_end = line_start + indent + body.len();
            let start = (line_start + from).min(line_end);
            let span = Span::new(start, (start + length).min(text.len()));
            let source = Source::new("tools/some tool.json", &text);
            let diagnostic = report(span, note, help, fix);
            if let Some(direct) = render(&source, &diagnostic) {
                prop_assert_eq!(direct, laid_out(&source, &diagnostic));
            }
        }
    }

    /// Every combination of a grid around the edges (lines that just fit or are just cut,
    /// underlines at the start, the end and past it, notes and helps): where it writes a
    /// report, the report is the renderer's; and it writes a good part of them (4,245 of
    /// 9,072: it leaves indented long lines, and underlines past their line, to the renderer).
    #[test]
    fn writes_the_renderers_bytes_around_every_edge() {
        let (mut written, mut all) = (0, 0);
        for indent in 0..9 {
            for length in [1, 20, 130, 134, 135, 136, 137, 138, 139, 140, 200, 400] {
                let body: String = (0..length).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
                let text = file(1, indent, &body, 1);
                let source = Source::new("t.json", &text);
                for from in [0, 1, indent, indent + 1, indent + length / 2, indent + length] {
                    for width in [0, 1, 7, 59, 60, 61, 300] {
                        for note in [None, Some("here".to_owned())] {
                            let span = Span::new(2 + from, (2 + from + width).min(text.len()));
                            let diagnostic = report(span, note, Some("a help".into()), Some(false));
                            all += 1;
                            if let Some(direct) = render(&source, &diagnostic) {
                                written += 1;
                                assert_eq!(direct, laid_out(&source, &diagnostic), "{span:?}");
                            }
                        }
                    }
                }
            }
        }
        assert!(written * 3 > all, "{written} of {all} written directly");
    }

    #[test]
    fn the_corpus_report_shapes_are_written_directly() {
        // An avatar's underline on a long line, and a comment's with its fix.
        let avatar = format!("\"avatar\": \"{}\"", "iVBORw0KGgo".repeat(40));
        let text = file(2, 4, &avatar, 1);
        let start = text.find("iVBOR").unwrap_or_default();
        let source = Source::new("tool.json", &text);
        let diagnostic = Diagnostic::new(&UNEXPECTED_TOKEN, "the avatar is a 32x32 PNG image")
            .at(Span::new(start, start + avatar.len() - 12));
        let direct = render(&source, &diagnostic);
        assert_eq!(direct.as_deref(), Some(laid_out(&source, &diagnostic).as_str()));
        assert!(direct.is_some_and(|report| report.contains("...")));

        let text = file(1, 2, "// a note", 0);
        let source = Source::new("tool.json", &text);
        let diagnostic = Diagnostic::new(&COMMENT, "comments are not part of JSON")
            .at(Span::new(4, 13))
            .with_help("tools that read plain JSON will reject this file")
            .with_fix("remove the comment", Vec::new());
        let direct = render(&source, &diagnostic);
        assert_eq!(direct.as_deref(), Some(laid_out(&source, &diagnostic).as_str()));
    }

    #[test]
    fn what_it_does_not_write_is_left_to_the_renderer() {
        let text = file(0, 0, "\"k\": \"caf\u{e9}\"", 0);
        let source = Source::new("tool.json", &text);
        let wide = Diagnostic::new(&UNEXPECTED_TOKEN, "m").at(Span::new(0, 3));
        assert_eq!(render(&source, &wide), None, "a line that is not ASCII");
        let text = file(0, 12, &"x".repeat(200), 0);
        let source = Source::new("tool.json", &text);
        let indented = Diagnostic::new(&UNEXPECTED_TOKEN, "m").at(Span::new(20, 23));
        assert_eq!(render(&source, &indented), None, "a long line indented past six spaces");
    }
}
