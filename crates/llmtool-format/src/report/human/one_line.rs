//! The most common report written directly: one label, on one line, in plain text.
//!
//! `annotate_snippets` lays out any report (several labels, spans over lines, tabs, colour) on
//! a grid of styled characters. For one label on one line its output comes down to a few lines
//! of text, and building the grid took a tenth of `check`'s time on a corpus of 10,000 files.
//! [`render`] writes those lines itself, with the renderer's rules for a line too long for the
//! terminal (the part around the label shown, `...` where it is cut) and for wide characters,
//! and declines everything else, which the renderer then lays out. The differential tests
//! below hold the two to the same bytes over random reports.

use unicode_width::UnicodeWidthChar as _;

use crate::diagnostic::{Diagnostic, Severity};
use crate::report::Source;

use super::{MAX_WINDOW, cut_window, fix_note, shown_range};

/// How many columns `annotate_snippets` gives a report (its default terminal width).
const TERM_WIDTH: usize = 140;

/// What marks a line cut on either side.
const CUT: &str = "...";

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
    let note = label.message.as_deref();
    let line = source.line_range(label.span.start);
    let underline = shown_range(source.text, label.span);
    // A line too long to measure for each report is shown in part, by the renderer.
    if line.len() > MAX_WINDOW {
        return None;
    }
    let window = cut_window(source, line, std::iter::once(label.span));
    let code = &source.text[window.clone()];
    if underline.end > window.end
        || code.is_empty()
        || code.ends_with(char::is_whitespace)
        || !drawn_as_is(code)
        || !note.is_none_or(drawn_as_is)
    {
        return None;
    }
    // A span that does not fall on characters' edges is the renderer's to deal with.
    let before = code.get(..underline.start.checked_sub(window.start)?)?;
    let start = width(before);
    // An empty underline is one caret wide.
    let end = (start + width(source.text.get(underline)?)).max(start + 1);
    let line_number = source.line_column(label.span.start).line.to_string();
    let code_offset = line_number.len() + 3;
    let label_end = end + note.map_or(0, |note| width(note) + 1);
    let shown = Shown::new(code, start, end, label_end, TERM_WIDTH.saturating_sub(code_offset))?;

    let mut code_row = Row::default();
    code_row.put(0, &line_number);
    code_row.put(code_offset - 2, "|");
    shown.draw(&mut code_row, code_offset)?;
    let mut underline_row = Row::default();
    underline_row.put(code_offset - 2, "|");
    if let Some(note) = note {
        underline_row.put(code_offset + (end + 1).saturating_sub(shown.left), note);
    }
    for column in start..end {
        underline_row.put((code_offset + column).saturating_sub(shown.left), "^");
    }

    let level = match diagnostic.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "info",
    };
    let gutter = " ".repeat(line_number.len() + 1);
    let mut out = format!(
        "{level}[{code}]: {message}\n{arrow}--> {path}:{line_number}:{column}\n{gutter}|\n\
         {code_row}\n{underline_row}",
        code = diagnostic.rule.code,
        message = diagnostic.message,
        arrow = &gutter[1..],
        path = source.path,
        column = before.chars().count() + 1,
        code_row = code_row.text(),
        underline_row = underline_row.text(),
    );
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

/// Whether the renderer shows `text` character for character: no control characters (a tab
/// takes four columns, the others a picture of themselves) and none of the joiners and
/// direction marks it replaces.
fn drawn_as_is(text: &str) -> bool {
    !text.chars().any(|c| {
        c.is_control()
            || matches!(c, '\u{200d}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

/// The columns a character takes, as the renderer counts them.
fn char_width(c: char) -> usize {
    c.width().unwrap_or(1)
}

fn width(text: &str) -> usize {
    // Printable ASCII (control characters are declined before) takes a column a byte.
    if text.is_ascii() { text.len() } else { text.chars().map(char_width).sum() }
}

/// The part of a line the renderer shows: all of it when it fits, else a stretch around the
/// underline (and its note) that fits, with [`CUT`] on the sides cut off.
struct Shown<'a> {
    /// The characters shown, before any mark of a cut.
    text: &'a str,
    /// The column of the line where the shown part starts; the underline moves left by as much.
    left: usize,
    cut_left: bool,
    cut_right: bool,
}

impl<'a> Shown<'a> {
    /// `code` underlined from column `start` to `end`, its note ending at `label_end`, in
    /// `room` columns. The rules are the renderer's: leading whitespace of over 20 columns is
    /// trimmed first; then, when the line is still too wide, its indentation goes, or a stretch
    /// centred on the underline and note is shown.
    fn new(code: &'a str, start: usize, end: usize, label_end: usize, room: usize) -> Option<Self> {
        const PADDING: usize = 6;
        let indent = code.chars().take_while(|c| c.is_whitespace()).count();
        let line_width = width(code);
        let indent = indent.saturating_sub(PADDING);
        let (start, end, label_end) =
            (start.saturating_sub(PADDING), end + PADDING, label_end + PADDING);
        let left = if indent > 20 { indent - 16 } else { 0 };
        let (left, right) = match line_width.max(left) {
            right if right - left <= room => (left, right),
            _ if label_end.saturating_sub(indent) <= room && label_end >= indent => {
                (indent, indent + room)
            }
            _ if label_end - start <= room => {
                let left = start.saturating_sub((room - (label_end - start)) / 2);
                (left, left + room)
            }
            _ if end - start <= room => {
                let left = start.saturating_sub((room - (end - start)) / 5 * 2);
                (left, left + room)
            }
            _ => (start, end),
        };
        let cut_left = left > 0;
        let from = left.min(line_width);
        let to = if line_width.saturating_sub(left) <= room {
            line_width
        } else {
            right.min(line_width)
        };
        // The first character shown is the first to start at or past `from` columns; the last,
        // the last to end within `to - from` columns of it.
        let (mut skipped, mut first) = (0, code.len());
        for (at, c) in code.char_indices() {
            if skipped >= from {
                first = at;
                break;
            }
            skipped += char_width(c);
        }
        let (mut taken, mut last) = (0, code.len());
        for (at, c) in code[first..].char_indices() {
            taken += char_width(c);
            if taken > to.checked_sub(from)? {
                last = first + at;
                break;
            }
        }
        let text = &code[first..last];
        Some(Self { text, left: from.max(skipped), cut_left, cut_right: line_width > to })
    }

    /// Puts the shown part on `row` from `offset`, with its marks of a cut. Like the
    /// renderer's grid, a character takes one cell, however wide it is.
    fn draw(&self, row: &mut Row, offset: usize) -> Option<()> {
        // A mark on the left covers the characters of its width.
        let (mut covered, mut rest) = (0, self.text);
        if self.cut_left {
            for (at, c) in self.text.char_indices() {
                covered += char_width(c);
                rest = &self.text[at + c.len_utf8()..];
                if covered >= CUT.len() {
                    break;
                }
            }
            row.put(offset, CUT);
        }
        row.put(offset + covered, rest);
        if self.cut_right {
            // ... and on the right, the characters of its width at the end.
            let (mut width_taken, mut chars_taken) = (0, 0);
            for c in self.text.chars().rev() {
                width_taken += char_width(c);
                chars_taken += 1;
                if width_taken >= CUT.len() {
                    break;
                }
            }
            row.put((offset + covered + rest.chars().count()).checked_sub(chars_taken)?, CUT);
        }
        Some(())
    }
}

/// One line of the renderer's grid: a character a cell, spaces where nothing was put.
struct Row(Vec<char>);

impl Default for Row {
    fn default() -> Self {
        // A row is at most as wide as the terminal, give or take a mark of a cut.
        Self(Vec::with_capacity(TERM_WIDTH + 8))
    }
}

impl Row {
    fn put(&mut self, at: usize, text: &str) {
        for (cell, c) in (at..).zip(text.chars()) {
            if cell >= self.0.len() {
                self.0.resize(cell + 1, ' ');
            }
            self.0[cell] = c;
        }
    }

    fn text(&self) -> String {
        let mut text = String::with_capacity(self.0.len());
        text.extend(&self.0);
        text
    }
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

    /// A character of a line: mostly ASCII, with letters that take one column (`é`, a
    /// combining accent that takes none), two (CJK, emoji) and Unicode spaces.
    fn any_char() -> impl Strategy<Value = char> {
        prop_oneof![
            12 => proptest::char::range(' ', '~'),
            1 => Just('\u{e9}'),
            1 => Just('\u{301}'),
            1 => Just('\u{4e2d}'),
            1 => Just('\u{1f680}'),
            1 => Just('\u{a0}'),
            1 => Just('\u{3000}'),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn writes_what_annotate_snippets_lays_out(
            before in prop_oneof![Just(0usize), Just(3), Just(12), Just(150)],
            indent in prop_oneof![0usize..12, 18usize..40],
            body in proptest::collection::vec(any_char(), 1..400),
            after in 0usize..3,
            from in 0usize..1300,
            length in 0usize..200,
            note in proptest::option::of(proptest::collection::vec(any_char(), 0..30)),
            help in proptest::option::of("[^\\p{C}]{0,60}"),
            fix in proptest::option::of(any::<bool>()),
        ) {
            let body: String = body.into_iter().collect();
            let text = file(before, indent, &body, after);
            let line_start = 2 * before;
            let line_end = line_start + indent + body.len();
            let boundary = |at: usize| (at..=text.len()).find(|&i| text.is_char_boundary(i));
            let start = boundary((line_start + from).min(line_end)).unwrap_or(line_end);
            let end = boundary((start + length).min(text.len())).unwrap_or(text.len());
            let source = Source::new("tools/some tool.json", &text);
            let note = note.map(|note| note.into_iter().collect());
            let diagnostic = report(Span::new(start, end), note, help, fix);
            if let Some(direct) = render(&source, &diagnostic) {
                prop_assert_eq!(direct, laid_out(&source, &diagnostic));
            }
        }
    }

    /// Every combination of a grid around the edges (lines that just fit or are just cut,
    /// underlines at the start, the end and past it, notes and helps): where it writes a
    /// report, the report is the renderer's; and it writes most of them (6,128 of 9,072: it
    /// leaves the underlines that run past their line to the renderer).
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
        assert!(written * 3 > all * 2, "{written} of {all} written directly");
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
        let text = file(0, 2, "\"k\":\t\"v\"", 1);
        let source = Source::new("tool.json", &text);
        let tab = Diagnostic::new(&UNEXPECTED_TOKEN, "m").at(Span::new(2, 5));
        assert_eq!(render(&source, &tab), None, "a line with a tab");
        let text = file(0, 2, "\"k\": 1,", 2);
        let source = Source::new("tool.json", &text);
        let across = Diagnostic::new(&UNEXPECTED_TOKEN, "m").at(Span::new(2, 14));
        assert_eq!(render(&source, &across), None, "an underline past its line");
        let two = Diagnostic::new(&UNEXPECTED_TOKEN, "m")
            .at(Span::new(2, 5))
            .with_secondary(Span::new(12, 15), "and here");
        assert_eq!(render(&source, &two), None, "two labels");
    }

    #[test]
    fn wide_characters_and_long_indented_lines_are_written_directly() {
        let body = format!(
            "\"p\": \"{} \u{1f680} {{{{x}}}} {}\"",
            "caf\u{e9} ".repeat(60),
            "y".repeat(300)
        );
        let text = file(1, 12, &body, 1);
        let start = text.find("{{x}}").unwrap_or_default();
        let source = Source::new("tool.json", &text);
        let diagnostic = Diagnostic::new(&UNEXPECTED_TOKEN, "`{{x}}` is not declared")
            .at(Span::new(start, start + 5))
            .with_help("declare it");
        let direct = render(&source, &diagnostic);
        assert_eq!(direct.as_deref(), Some(laid_out(&source, &diagnostic).as_str()));
        assert!(direct.is_some_and(|report| report.contains("2 | ...")));
    }
}
