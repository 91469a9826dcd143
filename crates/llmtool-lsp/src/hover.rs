//! What hovering shows: a variable (from a placeholder or its name), a key's documentation, a
//! model's price, and the prompt rendered with the defaults.

use llmtool_format::Span;
use llmtool_providers::presets::{Preset, preset};
use llmtool_providers::pricing::PriceTable;
use llmtool_providers::resolve::Providers;

use crate::context::{self, Slot, Step};
use crate::files::OpenFile;
use crate::navigation::{self, Target};
use crate::schema;

/// Markdown for the thing at `offset`, and the span it covers.
pub fn at(file: &OpenFile, offset: usize, prices: &PriceTable) -> Option<(String, Span)> {
    let tool = file.document.tool.as_ref()?;
    if let Some(target) = navigation::target_at(file, offset) {
        let span = match &target {
            Target::Placeholder(u) => u.span,
            Target::Declaration(v) => v.name.span,
        };
        let text = match navigation::variable(tool, target.name()) {
            Some(variable) => navigation::describe_variable(variable),
            None => format!("`{}` is not a declared variable", target.name()),
        };
        return Some((text, span));
    }
    let place = context::place_at(file.text(), offset)?;
    let literal = place.literal?;
    match place.slot {
        Slot::Key => {
            let key = file.text().get(literal.start + 1..literal.end.saturating_sub(1))?;
            let mut path = place.path.clone();
            path.push(Step::Key(key.to_owned()));
            Some((format!("**`{key}`**\n\n{}", schema::doc(&path)?), literal))
        }
        Slot::Value if place.is(&["model_prompt"]) => {
            Some((navigation::rendered_with_defaults(file), literal))
        }
        Slot::Value
            if place.is(&["metadata", "model_version", "*"])
                || place.is(&["metadata", "model_version"]) =>
        {
            let model = file.text().get(literal.start + 1..literal.end.saturating_sub(1))?;
            Some((price(model, prices), literal))
        }
        Slot::Value => None,
    }
}

/// A model's price from the table (or why there is none). The provider is the one a run
/// would send the name to (`Providers::parse_model`: aliases, `provider/`, then prefixes);
/// a `provider/model` of another provider is priced as written.
pub fn price(written: &str, prices: &PriceTable) -> String {
    let (provider, model) = match Providers::default().parse_model(written) {
        (Some(provider), model) => (provider, model),
        // A `provider/model` of a provider llmtool does not know by itself (one the config
        // file adds): priced as written, as the config file's prices are keyed.
        (None, _) => match written.split_once('/') {
            Some((provider, model)) => (provider.to_owned(), model.to_owned()),
            None => return format!("**`{written}`**: no provider is known for this model"),
        },
    };
    if preset(&provider).is_some_and(Preset::is_local) {
        return format!("**`{written}`** runs on this machine: it costs nothing per token");
    }
    match prices.lookup(&provider, &model) {
        Some(entry) => {
            let per_million = |dollars_per_token: f64| dollars_per_token * 1e6;
            format!(
                "**`{written}`** on {provider}: ${:.2} per million input tokens, ${:.2} per million output tokens\n\n(`{}`, {})",
                per_million(entry.price.input),
                per_million(entry.price.output),
                entry.entry,
                entry.source
            )
        }
        None => format!("**`{written}`** on {provider}: not in the price table"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_is_priced_on_the_provider_a_run_would_use() {
        let prices = PriceTable::new(std::collections::HashMap::new());
        for written in ["gpt-4o", "openai/gpt-4o"] {
            let shown = price(written, &prices);
            assert!(shown.contains("on openai: $"), "{written}: {shown}");
        }
        // The provider whatever the case, as `llmtool run` finds it; the price table's names
        // are the provider's own, as a run looks them up.
        let shown = price("GPT-4o", &prices);
        assert!(shown.contains("on openai: not in the price table"), "{shown}");
        assert!(price("local/smollm2", &prices).contains("runs on this machine"));
        assert!(price("nobody-knows-me", &prices).contains("no provider is known"));
        assert!(price("work/house-model", &prices).contains("on work: not in the price table"));
    }
}
