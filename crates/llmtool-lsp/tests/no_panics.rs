//! Every feature of the server at every place of tool files mangled by random edits: nothing
//! panics, and what the features answer fits together (positions round-trip, semantic tokens
//! decode back to the placeholders, formatting edits give `fmt`'s text, a rename leaves no use
//! of the old name).

use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;

use llmtool_format::format::format_source;
use llmtool_format::syntax::{NodeKind, parse};
use llmtool_lsp::files::{Files, OpenFile};
use llmtool_lsp::positions::{Encoding, Lines};
use llmtool_lsp::{actions, completion, hover, lenses, navigation, outline};
use llmtool_providers::pricing::PriceTable;
use proptest::prelude::*;
use tower_lsp_server::ls_types::{Range, TextDocumentContentChangeEvent, TextEdit, Uri};

/// Pieces typed into the files: JSON punctuation, placeholders, escapes, and characters that
/// take one, two and four bytes in UTF-8 and one or two units in UTF-16.
const PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    "\n",
    "\r\n",
    "\r",
    "{{",
    "}}",
    "{{name}}",
    "\\",
    "\\u00e9",
    "\\n",
    "\\q",
    "\\uD83D",
    "\\u12",
    "\\u+0e9",
    "é",
    "한",
    "𝄞",
    "model_prompt",
    "\"variables\": [",
    "\"type\": \"text\"",
    " ",
    "0",
];

/// What every variable is renamed to: a quote and a backslash, which the prompt must escape.
const NEW_NAME: &str = "re\"na\\med";

fn examples() -> Vec<String> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut texts: Vec<String> =
        ["email-reply-ko.json", "sql-assistant.json", "resumen-de-texto.json"]
            .iter()
            .map(|name| {
                std::fs::read_to_string(folder.join(name)).expect("the examples are readable")
            })
            .collect();
    texts.sort();
    texts
}

/// One random edit: where (as a fraction of the text), how many characters it removes, and
/// what it types there.
#[derive(Debug, Clone)]
struct Typing {
    at: f64,
    removed: usize,
    typed: &'static str,
}

fn typing() -> impl Strategy<Value = Typing> {
    (0.0..=1.0f64, 0..6usize, proptest::sample::select(PIECES))
        .prop_map(|(at, removed, typed)| Typing { at, removed, typed })
}

fn uri() -> Uri {
    Uri::from_str("file:///work/tool.llmtool.json").expect("a valid URI")
}

/// The character boundary nearest below `fraction` of the text (never between the `\r` and
/// `\n` of a line break, where no position can point).
fn boundary(text: &str, fraction: f64) -> usize {
    // The fraction is in 0..=1, so the product fits the text's length.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
    let mut at = ((text.len() as f64) * fraction) as usize;
    while !text.is_char_boundary(at) || inside_a_line_break(text, at) {
        at -= 1;
    }
    at
}

fn inside_a_line_break(text: &str, at: usize) -> bool {
    text[..at].ends_with('\r') && text[at..].starts_with('\n')
}

/// Applies the editor's edits to `text` (they do not overlap; applied from the last).
fn apply(lines: &Lines, text: &str, edits: &[TextEdit]) -> String {
    let mut spans: Vec<_> =
        edits.iter().map(|e| (lines.span(text, e.range), &e.new_text)).collect();
    spans.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
    let mut out = text.to_owned();
    for (span, new_text) in spans {
        out.replace_range(span.range(), new_text);
    }
    out
}

/// Every character boundary of a short text, or about 200 spread over a longer one.
fn offsets(text: &str) -> Vec<usize> {
    let step = (text.len() / 200).max(1);
    (0..=text.len()).step_by(step).filter(|&o| text.is_char_boundary(o)).collect()
}

fn every_feature(file: &OpenFile, encoding: Encoding) {
    let prices = PriceTable::new(HashMap::new());
    let uri = uri();
    let text = file.text();
    let whole = Range::new(file.lines.position(text, 0), file.lines.position(text, text.len()));
    for offset in offsets(text) {
        let position = file.lines.position(text, offset);
        // Between `\r` and `\n` is no position of its own: it is the end of that line.
        if !inside_a_line_break(text, offset) {
            assert_eq!(file.lines.offset(text, position), offset, "{position:?} of byte {offset}");
        }
        let _ = completion::at(file, offset, &prices);
        let _ = hover::at(file, offset, &prices);
        let _ = navigation::target_at(file, offset);
        let cursor = Range::new(position, position);
        let _ = actions::code_actions(&uri, file, cursor, &[]);
        let _ = actions::format(file, Some(Range::new(whole.start, position)));
        if let Ok(edits) = navigation::rename(file, offset, NEW_NAME) {
            let old = navigation::target_at(file, offset).map(|t| t.name().to_owned());
            let uses_of = |file: &OpenFile, name: &str| {
                navigation::uses(file).iter().filter(|u| u.name == name).count()
            };
            let before = old.as_deref().map_or(0, |old| uses_of(file, old));
            let edits: Vec<_> = edits
                .into_iter()
                .map(|(span, new_text)| TextEdit::new(file.lines.range(text, span), new_text))
                .collect();
            let renamed = reopen(apply(&file.lines, text, &edits), encoding);
            let renamed = renamed.get(&uri).expect("just opened");
            if let Some(old) = old.filter(|old| old != NEW_NAME) {
                assert!(navigation::uses(renamed).iter().all(|u| u.name != old), "{old} is left");
                // Each use now names the new name, written escaped in the prompt's string.
                assert_eq!(uses_of(renamed, NEW_NAME), before, "uses of {old} after renaming");
            }
        }
    }
    let _ = outline::symbols(file);
    let _ = lenses::code_lenses(&uri, file);
    let _ = actions::fix_all(file);
    semantic_tokens_decode_to_the_placeholders(file);
    each_use_is_its_placeholder_in_the_source(file);
    if let Some(edits) = actions::format(file, None) {
        let formatted = format_source(text, false).expect("format answered, so fmt can").text;
        assert_eq!(apply(&file.lines, text, &edits), formatted);
    }
}

fn semantic_tokens_decode_to_the_placeholders(file: &OpenFile) {
    let text = file.text();
    let (mut line, mut character) = (0, 0);
    let mut decoded = Vec::new();
    for token in lenses::semantic_tokens(file) {
        line += token.delta_line;
        character =
            if token.delta_line == 0 { character + token.delta_start } else { token.delta_start };
        // Type 0 is a placeholder; the others colour a smart tool's Python.
        if token.token_type == 0 {
            decoded.push((line, character, token.length));
        }
    }
    let expected: Vec<_> = navigation::uses(file)
        .iter()
        .map(|u| (file.lines.position(text, u.span.start), file.lines.position(text, u.span.end)))
        .filter(|(start, end)| start.line == end.line)
        .map(|(start, end)| (start.line, start.character, end.character - start.character))
        .collect();
    assert_eq!(decoded, expected);
}

/// The source of each placeholder's span, read as the lexer reads a string, is `{{name}}`.
fn each_use_is_its_placeholder_in_the_source(file: &OpenFile) {
    for found in navigation::uses(file) {
        let source = &file.text()[found.span.range()];
        let decoded = match parse(&format!("\"{source}\"")).root.map(|n| n.kind) {
            Some(NodeKind::String(value)) => value,
            other => panic!("{source:?} is not a string: {other:?}"),
        };
        let inside = decoded.strip_prefix("{{").and_then(|d| d.strip_suffix("}}"));
        assert_eq!(inside.map(str::trim), Some(found.name.as_str()), "{source:?}");
    }
}

/// The text checked again, as the server does after an edit.
fn reopen(text: String, encoding: Encoding) -> Files {
    let mut files = Files::default();
    files.configure(encoding, globset::GlobSet::empty());
    files.open(&uri(), 1, text);
    files
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn no_feature_panics_on_edited_tool_files(
        example in 0..3usize,
        line_break in proptest::sample::select(&["\n", "\r\n", "\r"][..]),
        utf8 in any::<bool>(),
        typings in proptest::collection::vec(typing(), 0..4),
    ) {
        let encoding = if utf8 { Encoding::Utf8 } else { Encoding::Utf16 };
        let mut files = Files::default();
        files.configure(encoding, globset::GlobSet::empty());
        let uri = uri();
        // Every line break the protocol knows, in files that are otherwise valid.
        files.open(&uri, 0, examples()[example].replace('\n', line_break));
        for (version, typed) in (1..).zip(&typings) {
            let file = files.get(&uri).expect("the file is open");
            let text = file.text();
            let start = boundary(text, typed.at);
            let mut end = text[start..].char_indices().nth(typed.removed).map_or(text.len(), |(i, _)| start + i);
            if inside_a_line_break(text, end) {
                end += 1;
            }
            let range = file.lines.range(text, llmtool_format::Span::new(start, end));
            let change = TextDocumentContentChangeEvent {
                range: Some(range),
                range_length: None,
                text: typed.typed.to_owned(),
            };
            let mut expected = text.to_owned();
            expected.replace_range(start..end, typed.typed);
            let file = files.change(&uri, version, vec![change]).expect("the file is open");
            prop_assert_eq!(file.text(), expected.as_str());
        }
        every_feature(files.get(&uri).expect("the file is open"), encoding);
    }
}

/// Placeholders after escapes the lexer reads in its own way (invalid ones, a broken `\u`, a
/// lone surrogate) are found where they are written.
#[test]
fn placeholders_after_odd_escapes_are_found_where_they_are_written() {
    let text = r#"{"model_prompt": "\q {{a}} \é {{b}} \u+0e9 {{c}} \uD83D\u00e9 {{d}} \uéé{{e}}", "metadata": {"prompt_name": "Odd", "variables": []}}"#;
    let files = reopen(text.to_owned(), Encoding::Utf16);
    let file = files.get(&uri()).expect("just opened");
    assert_eq!(navigation::uses(file).len(), 5);
    each_use_is_its_placeholder_in_the_source(file);
}

/// A line break typed into the prompt leaves it unterminated; the placeholders before the
/// break are still found where they are written.
#[test]
fn placeholders_of_an_unterminated_prompt_are_found_where_they_are_written() {
    let text = "{\"model_prompt\": \"Reply in a {{tone}}\n tone.\", \"metadata\": {}}";
    let files = reopen(text.to_owned(), Encoding::Utf8);
    let file = files.get(&uri()).expect("just opened");
    assert_eq!(navigation::uses(file).len(), 1);
    each_use_is_its_placeholder_in_the_source(file);
}
