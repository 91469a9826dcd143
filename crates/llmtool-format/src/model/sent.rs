//! [`Tool::sent_strings`]: the strings of a tool that can reach a model (its prompt, and its
//! variables' defaults and allowed values), each with where it is written. What data-loss
//! prevention looks at in a tool file (`llmtool scan`).

use crate::model::{DefaultValue, Spanned, Tool};
use crate::span::Span;

/// One string of a tool that a model may be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentString {
    /// Where it is in the tool: `model_prompt`, `metadata.variables[0].default`, ...
    pub field: String,
    /// Its span in the file, quotes included.
    pub span: Span,
    /// Its value, as decoded.
    pub value: String,
}

impl Tool {
    /// The prompt, then each variable's default (each item of a list) and allowed values, in
    /// file order; empty when the tool has no prompt.
    pub fn sent_strings(&self) -> Vec<SentString> {
        let sent = |field: String, string: &Spanned<String>| SentString {
            field,
            span: string.span,
            value: string.value.clone(),
        };
        let Some(prompt) = self.model_prompt.as_ref() else { return Vec::new() };
        let mut strings = vec![sent("model_prompt".to_owned(), prompt)];
        let variables =
            self.metadata.iter().flat_map(|m| m.variables.iter().flat_map(|v| v.value.iter()));
        for (index, variable) in variables.enumerate() {
            let at = format!("metadata.variables[{index}]");
            match variable.default.as_ref() {
                Some(Spanned { value: DefaultValue::List(items), .. }) => {
                    for (i, item) in items.iter().enumerate() {
                        strings.push(sent(format!("{at}.default[{i}]"), item));
                    }
                }
                Some(Spanned { value: DefaultValue::Text(value), span }) => {
                    strings.push(SentString {
                        field: format!("{at}.default"),
                        span: *span,
                        value: value.clone(),
                    });
                }
                None => {}
            }
            let allowed = variable.allowed_values.iter().flat_map(|l| l.value.iter());
            for (i, value) in allowed.enumerate() {
                strings.push(sent(format!("{at}.allowed_values[{i}]"), value));
            }
        }
        strings
    }
}

#[cfg(test)]
mod tests {
    use crate::Document;

    #[test]
    fn the_prompt_defaults_and_allowed_values_are_what_a_model_may_be_sent() {
        let text = r#"{"model_prompt": "Hi {{a}} {{b}}", "metadata": {"variables": [
            {"name": "a", "type": "text", "default": "Ann"},
            {"name": "b", "type": "multi-select", "default": ["x"], "allowed_values": ["x", "y"]}]}}"#;
        let tool = Document::from_text(text.to_owned()).tool.unwrap_or_default();
        let sent = tool.sent_strings();
        let fields: Vec<&str> = sent.iter().map(|s| s.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "model_prompt",
                "metadata.variables[0].default",
                "metadata.variables[1].default[0]",
                "metadata.variables[1].allowed_values[0]",
                "metadata.variables[1].allowed_values[1]",
            ]
        );
        assert_eq!(sent[1].value, "Ann");
        assert_eq!(&text[sent[1].span.start..sent[1].span.end], "\"Ann\"");
    }
}
