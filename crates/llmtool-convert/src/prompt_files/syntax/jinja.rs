//! Jinja2, as Prompty renders it: `{{ name }}`, a list as `{{ name | join(", ") }}`, and
//! literal `{{`, `{%` and `{#` written as string expressions.

use super::{Part, Slots, TemplateError};
use llmtool_format::template::{LIST_SEPARATOR, Piece};

/// Whether `name` can be written as a bare Jinja variable: an ASCII identifier that is not a
/// word of the language.
pub(crate) fn is_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !matches!(
            name,
            "true"
                | "false"
                | "none"
                | "True"
                | "False"
                | "None"
                | "and"
                | "or"
                | "not"
                | "in"
                | "is"
                | "if"
                | "else"
                | "elif"
                | "endif"
                | "for"
                | "endfor"
                | "loop"
                | "self"
        )
}

pub(crate) fn write<'a>(pieces: impl Iterator<Item = Piece<'a>>, slots: &Slots<'_>) -> String {
    super::write(pieces, escape, |slot, out| {
        // A `{` just before would open the expression early: it is printed by one.
        if out.ends_with('{') {
            out.pop();
            out.push_str("{{ \"{\" }}");
        }
        let name = &slots.names[slot];
        if slots.is_list(slot) {
            out.push_str(&format!("{{{{ {name} | join(\"{LIST_SEPARATOR}\") }}}}"));
        } else {
            out.push_str(&format!("{{{{ {name} }}}}"));
        }
    })
}

/// Literal text: each `{{`, `{%` and `{#` as an expression that prints it.
pub(crate) fn escape(text: &str, out: &mut String) {
    let mut rest = text;
    while let Some(at) = rest.find('{') {
        let next = rest[at + 1..].chars().next();
        if let Some(second @ ('{' | '%' | '#')) = next {
            out.push_str(&rest[..at]);
            out.push_str(&format!("{{{{ \"{{{second}\" }}}}"));
            rest = &rest[at + 2..];
        } else {
            out.push_str(&rest[..=at]);
            rest = &rest[at + 1..];
        }
    }
    out.push_str(rest);
}

/// Reads a Jinja template made of text, variables (`{{ x }}`, `{{ x | join(", ") }}`), string
/// expressions, `{% raw %}` blocks and comments. Anything else is an error naming it.
pub(crate) fn read(template: &str) -> Result<Vec<Part>, TemplateError> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut rest = template;
    // Whether the tag before ended with `-`: Jinja then drops the whitespace that follows it.
    let mut strip_next = false;
    // Where the template text since the last tag starts in `literal`: a `-` at the start of a
    // tag trims that text only.
    let mut since_tag = 0;
    while let Some(at) = rest.find('{') {
        let kind = rest[at + 1..].chars().next();
        let close = match kind {
            Some('{') => "}}",
            Some('%') => "%}",
            Some('#') => "#}",
            _ => {
                push_text(&mut literal, &rest[..=at], std::mem::take(&mut strip_next));
                rest = &rest[at + 1..];
                continue;
            }
        };
        push_text(&mut literal, &rest[..at], std::mem::take(&mut strip_next));
        // Where this tag starts in the template, to quote it as written.
        let start = template.len() - rest.len() + at;
        let inner_start = at + 2;
        let Some(length) = rest[inner_start..].find(close) else {
            let opening: String = template[start..].chars().take(24).collect();
            return Err(TemplateError::at(&opening, format!("`{opening}` is never closed")));
        };
        let tag = &rest[inner_start..inner_start + length];
        // `{{-` and `-}}` (and so on): the whitespace before, or after, the tag is dropped.
        if tag.starts_with('-') {
            let kept = literal.get(since_tag..).map_or(0, |text| text.trim_end().len());
            literal.truncate(since_tag.min(literal.len()) + kept);
        }
        strip_next = tag.ends_with('-');
        let inner = tag.trim_matches(|c: char| c.is_whitespace() || c == '-' || c == '+');
        rest = &rest[inner_start + length + 2..];
        let written = &template[start..template.len() - rest.len()];
        match kind {
            Some('#') => {}
            Some('%') if inner == "raw" => {
                let Some(end) = find_endraw(rest) else {
                    let message = format!("`{written}` has no `{{% endraw %}}`");
                    return Err(TemplateError::at(written, message));
                };
                let mut raw = &rest[..end.start];
                if std::mem::take(&mut strip_next) {
                    raw = raw.trim_start();
                }
                if end.strip_before {
                    raw = raw.trim_end();
                }
                literal.push_str(raw);
                strip_next = end.strip_after;
                rest = &rest[end.end..];
            }
            Some('%') => return Err(TemplateError::no_equivalent(written)),
            _ => match expression(inner).map_err(|problem| problem.error(written))? {
                Expression::Text(text) => literal.push_str(&text),
                Expression::Variable { name, list, default } => {
                    if !literal.is_empty() {
                        parts.push(Part::Literal(std::mem::take(&mut literal)));
                    }
                    parts.push(Part::Variable { name, list, default });
                }
            },
        }
        since_tag = literal.len();
    }
    push_text(&mut literal, rest, strip_next);
    if !literal.is_empty() {
        parts.push(Part::Literal(literal));
    }
    Ok(parts)
}

/// Adds the template's `text` to the literal, its leading whitespace dropped when the tag
/// before it ended with `-`.
fn push_text(literal: &mut String, text: &str, strip: bool) {
    literal.push_str(if strip { text.trim_start() } else { text });
}

/// Where `{% endraw %}` is, and whether it strips the whitespace around it.
struct EndRaw {
    start: usize,
    end: usize,
    /// `{%- endraw`: the raw text's trailing whitespace is dropped.
    strip_before: bool,
    /// `endraw -%}`: the whitespace after the tag is dropped.
    strip_after: bool,
}

/// The `{% endraw %}` in `text`, if there is one.
fn find_endraw(text: &str) -> Option<EndRaw> {
    let mut from = 0;
    while let Some(at) = text[from..].find("{%") {
        let start = from + at;
        let end = start + text[start..].find("%}")? + 2;
        let tag = &text[start + 2..end - 2];
        let inner = tag.trim_matches(|c: char| c.is_whitespace() || c == '-' || c == '+');
        if inner == "endraw" {
            let (strip_before, strip_after) = (tag.starts_with('-'), tag.ends_with('-'));
            return Some(EndRaw { start, end, strip_before, strip_after });
        }
        from = end;
    }
    None
}

enum Expression {
    Text(String),
    Variable { name: String, list: bool, default: Option<String> },
}

/// Why an expression has no equivalent.
enum ExpressionProblem {
    /// It is more than a variable or a string.
    NotAVariable,
    /// Its filter is neither the list join nor a default text.
    Filter,
}

impl ExpressionProblem {
    /// The error about `written`, the expression as written.
    fn error(self, written: &str) -> TemplateError {
        match self {
            ExpressionProblem::NotAVariable => TemplateError::no_equivalent(written),
            ExpressionProblem::Filter => TemplateError::at(
                written,
                format!(
                    "the filter in `{written}` has no equivalent; only `join(\"{LIST_SEPARATOR}\")` and `default(\"text\")` do"
                ),
            ),
        }
    }
}

fn expression(inner: &str) -> Result<Expression, ExpressionProblem> {
    if let Some(text) = string_literal(inner) {
        return Ok(Expression::Text(text));
    }
    let (name, filter) = match inner.split_once('|') {
        Some((name, filter)) => (name.trim(), Some(filter.trim())),
        None => (inner, None),
    };
    // A name, or a path into an object (`user.name`), which becomes a variable of its own.
    // Each step a name (not a number, nor a constant such as `true`).
    let is_word = |word: &str| {
        word.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
            && word.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !matches!(word, "true" | "false" | "none" | "True" | "False" | "None")
    };
    if !name.split('.').all(is_word) {
        return Err(ExpressionProblem::NotAVariable);
    }
    // The one argument of the filter `name(...)`, a string, if `filter` is that.
    let argument = |filter: &str, names: &[&str]| {
        let (called, rest) = filter.split_once('(')?;
        let argument = rest.trim_end().strip_suffix(')')?;
        names.contains(&called.trim()).then(|| string_literal(argument.trim()))?
    };
    let (list, default) = match filter {
        None => (false, None),
        Some(filter) => match argument(filter, &["join"]) {
            Some(separator) if separator == LIST_SEPARATOR => (true, None),
            Some(_) => return Err(ExpressionProblem::Filter),
            // The text rendered when no value is given (`d` is Jinja's other name for it).
            None => match argument(filter, &["default", "d"]) {
                Some(default) => (false, Some(default)),
                None => return Err(ExpressionProblem::Filter),
            },
        },
    };
    Ok(Expression::Variable { name: name.to_owned(), list, default })
}

/// The text of a quoted Jinja string with simple escapes, if `text` is one.
fn string_literal(text: &str) -> Option<String> {
    let quote = text.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let body = text.strip_prefix(quote)?.strip_suffix(quote)?;
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                other => out.push(other),
            },
            c if c == quote => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use llmtool_format::model::VariableKind;

    #[test]
    fn literal_braces_are_escaped_and_read_back() {
        let text = "a {{ b }} {% c %} {# d #} {x} }}";
        let mut out = String::new();
        escape(text, &mut out);
        assert_eq!(out, r#"a {{ "{{" }} b }} {{ "{%" }} c %} {{ "{#" }} d #} {x} }}"#);
        assert_eq!(read(&out).unwrap(), vec![Part::Literal(text.into())]);
    }

    #[test]
    fn variables_and_lists() {
        let names = ["topic".to_owned(), "tags".to_owned()];
        let slots =
            Slots { names: &names, kinds: vec![VariableKind::Text, VariableKind::MultiSelect] };
        let written = write(
            [Piece::Literal("On "), Piece::Slot(0), Piece::Literal(": "), Piece::Slot(1)]
                .into_iter(),
            &slots,
        );
        assert_eq!(written, r#"On {{ topic }}: {{ tags | join(", ") }}"#);
        let parts = read(&written).unwrap();
        assert_eq!(parts[1], Part::Variable { name: "topic".into(), list: false, default: None });
        assert_eq!(parts[3], Part::Variable { name: "tags".into(), list: true, default: None });
        assert!(read("{% for x in y %}").unwrap_err().message.contains("no equivalent"));
        assert!(read("{{ x | upper }}").unwrap_err().message.contains("join"));
        assert_eq!(
            read("{{ user.name }}").unwrap()[0],
            Part::Variable { name: "user.name".into(), list: false, default: None }
        );
        assert!(read("{{ user..name }}").is_err() && read("{{ items[0] }}").is_err());
        assert_eq!(
            read("{% raw %}{{ x }}{% endraw %}").unwrap(),
            vec![Part::Literal("{{ x }}".into())]
        );
    }

    #[test]
    fn a_dash_in_a_tag_drops_the_whitespace_on_its_side() {
        let text = |parts: Vec<Part>| super::super::to_prompt(&parts);
        assert_eq!(text(read("a  {{- v }}  b").unwrap()), "a{{v}}  b");
        assert_eq!(text(read("a  {{ v -}} \n b").unwrap()), "a  {{v}}b");
        assert_eq!(text(read("a \n {#- note -#} \n b").unwrap()), "ab");
        assert_eq!(text(read("a {%- raw -%} {{ x }} {%- endraw -%} b").unwrap()), "a{{ x }}b");
        assert_eq!(text(read("a {% raw %} x {% endraw %} b").unwrap()), "a  x  b");
        // Only the text since the tag before is trimmed, and a brace that opens no tag is text.
        assert_eq!(text(read("Hello {# c #}\n{{- name }}").unwrap()), "Hello {{name}}");
        assert_eq!(text(read("{{ \" \" }}{{- x }}").unwrap()), " {{x}}");
        assert_eq!(text(read("{{ a -}}\n{\"k\": 1}").unwrap()), "{{a}}{\"k\": 1}");
        assert!(read("Pi is {{ 3.14 }}").is_err() && read("{{ true }}").is_err());
    }
}
