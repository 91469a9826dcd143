//! LT211: a declared variable that the prompt never uses.

use crate::rules::names::NameMap;

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// A variable is declared but `model_prompt` has no `{{name}}` for it.
    ///
    /// Its value would be asked for and then thrown away. Usually the placeholder is misspelled
    /// (see LT212) or the variable is left over from an older prompt.
    ///
    /// ```json
    /// { "model_prompt": "Summarize the text.", "metadata": { "variables": [{ "name": "text", "type": "text" }] } }
    /// ```
    pub static UNUSED_VARIABLE = ("LT211", "unused-variable", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    if cx.tool.model_prompt.is_none() {
        return;
    }
    let used = cx.placeholder_names();
    // A placeholder that names no variable, paired with the declared name LT212 suggests for
    // it: that variable is then likely the one misspelled there.
    let declared = cx.declared_names();
    let mut misspelled: NameMap<&str> = NameMap::default();
    if cx.tool.declares_variables() {
        for stray in used.names().filter(|name| !declared.contains(name)) {
            if let Some(near) = crate::suggest::closest(stray, declared.names()) {
                misspelled.insert(near, stray);
            }
        }
    }
    for variable in cx.tool.variables() {
        let name = variable.name.value.trim();
        // An empty name or one with braces has its own, clearer diagnostic (LT201, LT203).
        let unusable = name.is_empty() || crate::template::holds_braces(name);
        if !unusable && !used.contains(name) {
            let help = match misspelled.get(name) {
                Some(typo) => format!(
                    "the prompt has `{{{{{typo}}}}}`: if that is `{name}` misspelled, write `{{{{{name}}}}}` there (LT212's fix)"
                ),
                None => format!(
                    "add `{{{{{name}}}}}` to the prompt where its value belongs, or remove the variable"
                ),
            };
            out.push(
                Diagnostic::new(
                    &UNUSED_VARIABLE,
                    format!("variable `{name}` is never used in `model_prompt`"),
                )
                .at(variable.name.span)
                .with_help(help),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Document;

    /// The messages and helps of `code` for a tool with `prompt` and variables `names`.
    fn said(prompt: &str, names: &[&str], code: &str) -> Vec<String> {
        let variables: Vec<_> = names
            .iter()
            .map(|name| serde_json::json!({"name": name, "type": "text", "description": "d"}))
            .collect();
        let text =
            serde_json::json!({"model_prompt": prompt, "metadata": {"variables": variables}});
        Document::from_text(text.to_string())
            .diagnostics
            .iter()
            .filter(|d| d.rule.code == code)
            .map(|d| format!("{} / {}", d.message, d.help.clone().unwrap_or_default()))
            .collect()
    }

    #[test]
    fn a_misspelled_placeholder_is_named_in_both_warnings() {
        // Two letters swapped: one slip, suggested both ways.
        let undeclared = said("Write in {{stlye}} about {{topic}}.", &["style", "topic"], "LT212");
        assert_eq!(undeclared.len(), 1);
        assert!(undeclared[0].contains("did you mean `{{style}}`"), "{undeclared:?}");
        let unused = said("Write in {{stlye}} about {{topic}}.", &["style", "topic"], "LT211");
        assert_eq!(unused.len(), 1);
        assert!(unused[0].contains("the prompt has `{{stlye}}`"), "{unused:?}");
        // A placeholder far from every name is no typo of them.
        let unrelated = said("Hello {{world}}.", &["style"], "LT211");
        assert!(unrelated[0].contains("add `{{style}}` to the prompt"), "{unrelated:?}");
    }
}
