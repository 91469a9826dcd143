//! Handlebars, as Dotprompt renders it (no HTML escaping): `{{name}}` or `{{[name with
//! spaces]}}`, a list joined with an `each` block, and literal `{{` written as `\{{`.

use super::{Part, Slots, TemplateError};
use llmtool_format::template::{LIST_SEPARATOR, Piece};

/// Whether `name` can be written in a mustache, bare or as a `[...]` segment.
pub(crate) fn is_name(name: &str) -> bool {
    !name.contains([']', '\n', '\r']) && !name.is_empty()
}

/// `name` as a Handlebars path: bare when it is a plain word, else `[name]`.
fn path(name: &str) -> String {
    let bare = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !matches!(name, "this" | "true" | "false" | "null" | "undefined" | "else");
    if bare { name.to_owned() } else { format!("[{name}]") }
}

/// The block that joins a list: `{{#each x}}{{#unless @first}}, {{/unless}}{{this}}{{/each}}`.
fn list_block(path: &str) -> String {
    format!(
        "{{{{#each {path}}}}}{{{{#unless @first}}}}{LIST_SEPARATOR}{{{{/unless}}}}{{{{this}}}}{{{{/each}}}}"
    )
}

/// Put between a `{` or `\` and a following `{{`, which they would change (`{{{` opens an
/// unescaped mustache, `\{{` an escaped one): a blank, and an empty comment that strips it.
const SEPARATOR: &str = " {{~!}}";

fn guard(out: &mut String) {
    if out.ends_with(['{', '\\']) {
        out.push_str(SEPARATOR);
    }
}

pub(crate) fn write<'a>(pieces: impl Iterator<Item = Piece<'a>>, slots: &Slots<'_>) -> String {
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Literal(text) => escape(text, &mut out),
            Piece::Slot(slot) => {
                guard(&mut out);
                let path = path(&slots.names[slot]);
                if slots.is_list(slot) {
                    out.push_str(&list_block(&path));
                } else {
                    out.push_str(&format!("{{{{{path}}}}}"));
                }
            }
        }
    }
    out
}

/// Literal text, with `\` before each `{{`.
fn escape(text: &str, out: &mut String) {
    for (i, part) in text.split("{{").enumerate() {
        if i > 0 {
            if out.ends_with('\\') {
                out.push_str(SEPARATOR);
            }
            out.push_str("\\{{");
        }
        out.push_str(part);
    }
}

/// Reads a Handlebars template made of text, variables, the list block above, `\{{` and
/// comments. Anything else is an error naming it.
pub(crate) fn read(template: &str) -> Result<Vec<Part>, TemplateError> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut rest = template;
    let mut strip_next = false;
    // Where the template text since the last mustache starts in `literal`: a `~` trims only it.
    let mut since_tag = 0;
    let trim_since = |literal: &mut String, since: usize| {
        let kept = literal.get(since..).map_or(0, |text| text.trim_end().len());
        literal.truncate(since.min(literal.len()) + kept);
    };
    while let Some(at) = rest.find("{{") {
        // Where this mustache starts in the template, to quote it as written.
        let start = template.len() - rest.len() + at;
        let mut before = &rest[..at];
        if strip_next {
            before = before.trim_start();
            strip_next = false;
        }
        if let Some(text) = before.strip_suffix('\\') {
            if let Some(text) = text.strip_suffix('\\') {
                // `\\{{`: a backslash, then a real mustache.
                literal.push_str(text);
                literal.push('\\');
            } else {
                // `\{{`: literal braces; the text goes on to the next `{{`.
                literal.push_str(text);
                literal.push_str("{{");
                rest = &rest[at + 2..];
                continue;
            }
        } else {
            literal.push_str(before);
        }
        let mut after = &rest[at + 2..];
        if after.starts_with("~!") {
            trim_since(&mut literal, since_tag);
            after = &after[1..];
        }
        if let Some(comment) = after.strip_prefix('!') {
            let long = comment.starts_with("--");
            let Some((end, strip_after)) = comment_close(comment, long) else {
                let opening: String = template[start..].chars().take(24).collect();
                return Err(TemplateError::at(
                    &opening,
                    format!("the comment `{opening}` is never closed"),
                ));
            };
            rest = drop_standalone_line(&mut literal, parts.is_empty(), &comment[end..]);
            strip_next = strip_after;
            since_tag = literal.len();
            continue;
        }
        let triple = after.starts_with('{');
        let close = if triple { "}}}" } else { "}}" };
        let body_start = usize::from(triple);
        let Some(end) = after.find(close) else {
            let opening: String = template[start..].chars().take(24).collect();
            return Err(TemplateError::at(&opening, format!("`{opening}` is never closed")));
        };
        let mut inner = &after[body_start..end];
        rest = &after[end + close.len()..];
        let written = &template[start..template.len() - rest.len()];
        if let Some(stripped) = inner.strip_prefix('~') {
            trim_since(&mut literal, since_tag);
            inner = stripped;
        }
        if let Some(stripped) = inner.strip_suffix('~') {
            strip_next = true;
            inner = stripped;
        }
        let inner = inner.trim();
        // `{{& name}}` inserts the value as given, as `{{{name}}}` does.
        let inner = match inner.strip_prefix('&') {
            Some(name) if !triple => name.trim_start(),
            _ => inner,
        };
        if let Some(list_path) = inner.strip_prefix("#each ") {
            let name =
                name_of(list_path.trim()).ok_or_else(|| TemplateError::no_equivalent(written))?;
            let tail = format!(
                "{{{{#unless @first}}}}{LIST_SEPARATOR}{{{{/unless}}}}{{{{this}}}}{{{{/each}}}}"
            );
            rest = rest.strip_prefix(tail.as_str()).ok_or_else(|| {
                let message = format!(
                    "the block `{written}` has no equivalent; only `{}` does",
                    list_block(list_path.trim())
                );
                TemplateError::at(written, message)
            })?;
            push_variable(&mut parts, &mut literal, name, true);
            since_tag = 0;
            continue;
        }
        if inner.starts_with(['#', '/', '^', '>', '&'])
            || inner.contains(' ') && !inner.starts_with('[')
        {
            return Err(TemplateError::no_equivalent(written));
        }
        let name = name_of(inner).ok_or_else(|| TemplateError::no_equivalent(written))?;
        push_variable(&mut parts, &mut literal, name, false);
        since_tag = 0;
    }
    if strip_next {
        rest = rest.trim_start();
    }
    literal.push_str(rest);
    if !literal.is_empty() {
        parts.push(Part::Literal(literal));
    }
    Ok(parts)
}

/// Where the comment whose text (after `{{!`) is `text` ends: past its closing `}}` (`--}}`
/// for a `long` one), and whether the closing has a `~`, which trims what follows.
fn comment_close(text: &str, long: bool) -> Option<(usize, bool)> {
    let mut from = 0;
    loop {
        let at = from + text[from..].find("}}")?;
        let (before, tilde) = match text[..at].strip_suffix('~') {
            Some(before) => (before, true),
            None => (&text[..at], false),
        };
        // A long comment's own `--` cannot close it: it needs one more after it.
        if !long || before.len() > 2 && before.ends_with("--") {
            return Some((at + 2, tilde));
        }
        from = at + 2;
    }
}

/// The template after a comment, `rest`: when the comment stands alone on its line (only
/// blanks before it, in `literal`, and after it), Handlebars drops the whole line, and so is
/// it dropped here, its blanks from `literal` and its end from `rest`. `first` says that
/// nothing but `literal` comes before it in the template.
fn drop_standalone_line<'a>(literal: &mut String, first: bool, rest: &'a str) -> &'a str {
    let line_start = literal.rfind('\n').map(|at| at + 1);
    let blank = |text: &str| text.chars().all(|c| c == ' ' || c == '\t' || c == '\r');
    let before = match line_start {
        Some(start) => blank(&literal[start..]),
        None => first && blank(literal),
    };
    let line_end = rest.find('\n');
    if !before || !blank(&rest[..line_end.unwrap_or(rest.len())]) {
        return rest;
    }
    literal.truncate(line_start.unwrap_or(0));
    &rest[line_end.map_or(rest.len(), |end| end + 1)..]
}

fn push_variable(parts: &mut Vec<Part>, literal: &mut String, name: String, list: bool) {
    if !literal.is_empty() {
        parts.push(Part::Literal(std::mem::take(literal)));
    }
    parts.push(Part::Variable { name, list, default: None });
}

/// The variable named by a path: `name`, `[name]`, or a path into an object (`user.name`),
/// which becomes a variable of its own; none for a data variable (`@index`), `this` or a
/// path up (`../x`).
fn name_of(path: &str) -> Option<String> {
    if let Some(name) = path.strip_prefix('[').and_then(|p| p.strip_suffix(']')) {
        return (!name.is_empty()).then(|| name.to_owned());
    }
    let segments_plain = path.split('.').all(|segment| {
        !segment.is_empty()
            && segment != "this"
            && !segment.starts_with('@')
            && !segment.contains(['/', '[', ']'])
    });
    segments_plain.then(|| path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use llmtool_format::model::VariableKind;

    fn slots(names: &[String]) -> Slots<'_> {
        Slots { names, kinds: vec![VariableKind::Text, VariableKind::MultiSelect] }
    }

    #[test]
    fn written_and_read_back() {
        let names = ["aspect ratio".to_owned(), "tags".to_owned()];
        let pieces = [
            Piece::Literal("Use {{braces}} {"),
            Piece::Slot(0),
            Piece::Literal("} and \\"),
            Piece::Slot(1),
            Piece::Literal("."),
        ];
        let written = write(pieces.into_iter(), &slots(&names));
        assert_eq!(
            written,
            "Use \\{{braces}} { {{~!}}{{[aspect ratio]}}} and \\ {{~!}}{{#each tags}}{{#unless @first}}, {{/unless}}{{this}}{{/each}}."
        );
        let parts = read(&written).unwrap();
        assert_eq!(
            parts,
            vec![
                Part::Literal("Use {{braces}} {".into()),
                Part::Variable { name: "aspect ratio".into(), list: false, default: None },
                Part::Literal("} and \\".into()),
                Part::Variable { name: "tags".into(), list: true, default: None },
                Part::Literal(".".into()),
            ]
        );
    }

    #[test]
    fn an_ampersand_inserts_the_value_as_given_as_three_braces_do() {
        let text = |template: &str| super::super::to_prompt(&read(template).unwrap());
        assert_eq!(
            text("<{{& name}}> <{{{name}}}> <{{&name}}>"),
            "<{{name}}> <{{name}}> <{{name}}>"
        );
    }

    #[test]
    fn helpers_are_refused() {
        assert!(read("{{#if x}}y{{/if}}").is_err());
        assert!(read("{{role \"system\"}}").is_err());
        assert!(read("{{#each x}}{{this}}{{/each}}").is_err());
        assert_eq!(read("a{{! note }}b{{!-- x --}}").unwrap(), vec![Part::Literal("ab".into())]);
    }

    #[test]
    fn a_comment_alone_on_its_line_takes_the_line_with_it() {
        let text = |template: &str| super::super::to_prompt(&read(template).unwrap());
        assert_eq!(
            text("{{!-- licence --}}\nHello {{name}}\n  {{! note }}  \nBye"),
            "Hello {{name}}\nBye"
        );
        assert_eq!(text("Hello {{! inline }} there\n"), "Hello  there\n");
        assert_eq!(text("{{name}} {{! after a value }}\nnext"), "{{name}} \nnext");
        // A `~` on the comment's closing trims what follows; one on a mustache trims only the
        // text since the mustache before.
        assert_eq!(text("{{!-- a --~}}\nHello {{name}}\n{{!-- b --}}"), "Hello {{name}}\n");
        assert_eq!(text("Hello {{! c }}\n{{~name}}"), "Hello {{name}}");
        assert!(read("{{!-- never closed").unwrap_err().construct.is_some());
    }
}
