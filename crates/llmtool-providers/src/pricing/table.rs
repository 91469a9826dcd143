//! The price table: LiteLLM's published prices (`data/prices.json`, a snapshot refreshed by
//! `scripts/refresh_prices.py`), and the lookup that finds a provider's model in it.
//!
//! The table names models its own way: OpenAI's and Anthropic's bare (`gpt-4o`,
//! `claude-sonnet-4-5`), most others behind a provider prefix (`gemini/gemini-2.5-flash`,
//! `groq/llama-3.3-70b-versatile`), dated snapshots beside their aliases. A model is looked up
//! under our provider's prefix, then bare (only when the entry is that provider's), then the
//! same two without a date suffix or `-latest`. A provider the table does not know (a server
//! of the user's own) finds nothing: its models are unpriced unless the config prices them,
//! never priced as free.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde::Deserialize;

use super::{Price, PriceEntry};

/// The snapshot, as `scripts/refresh_prices.py` writes it.
const SNAPSHOT: &str = include_str!("../../data/prices.json");

/// Where the table's prices come from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct TableSource {
    pub package: String,
    pub version: String,
    pub refreshed: String,
}

impl std::fmt::Display for TableSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} ({})", self.package, self.version, self.refreshed)
    }
}

#[derive(Debug, Clone, Deserialize)]
struct Snapshot {
    source: TableSource,
    models: HashMap<String, Model>,
}

#[derive(Debug, Clone, Deserialize)]
struct Model {
    provider: String,
    input: f64,
    cached_input: Option<f64>,
    cache_write: Option<f64>,
    output: f64,
    reasoning: Option<f64>,
    batch_input: Option<f64>,
    batch_output: Option<f64>,
    max_output: Option<u64>,
    max_input: Option<u64>,
    image_output: Option<f64>,
    per_image: Option<f64>,
}

impl Model {
    fn price(&self) -> Price {
        Price {
            input: self.input,
            cached_input: self.cached_input,
            cache_write: self.cache_write,
            output: self.output,
            reasoning: self.reasoning,
            batch_input: self.batch_input,
            batch_output: self.batch_output,
            max_output: self.max_output,
            max_input: self.max_input,
            image_output: self.image_output,
            per_image: self.per_image,
        }
    }
}

/// The prices of models: the table, with the config file's prices (by `provider/model`) over it.
#[derive(Debug, Clone)]
pub struct PriceTable {
    snapshot: &'static Snapshot,
    overrides: HashMap<String, Price>,
    /// Added on top of the table's prices, in percent.
    markup_percent: Option<f64>,
}

static BUILT_IN: LazyLock<Snapshot> = LazyLock::new(|| {
    #[allow(clippy::expect_used, reason = "the snapshot is checked in and parsed by a test")]
    serde_json::from_str(SNAPSHOT).expect("data/prices.json parses")
});

/// Our providers' names in the table: the prefix of their keys, and the `provider` their
/// bare keys carry.
const PROVIDERS: &[(&str, &str, &[&str])] = &[
    ("openai", "openai/", &["openai"]),
    ("anthropic", "anthropic/", &["anthropic"]),
    ("gemini", "gemini/", &["gemini"]),
    ("vertex", "vertex_ai/", &["vertex_ai-language-models", "vertex_ai-anthropic_models"]),
    ("groq", "groq/", &["groq"]),
    ("mistral", "mistral/", &["mistral"]),
    ("together", "together_ai/", &["together_ai"]),
    ("perplexity", "perplexity/", &["perplexity"]),
    ("deepseek", "deepseek/", &["deepseek"]),
    ("openrouter", "openrouter/", &["openrouter"]),
    ("xai", "xai/", &["xai"]),
];

impl PriceTable {
    /// The built-in table, with `overrides` (US dollars per token, by `provider/model`) over it.
    pub fn new(overrides: HashMap<String, Price>) -> Self {
        PriceTable { snapshot: &BUILT_IN, overrides, markup_percent: None }
    }

    /// The same, the table's prices raised by `markup_percent` (the overrides carry their
    /// own markup already).
    #[must_use]
    pub fn with_markup(self, markup_percent: Option<f64>) -> Self {
        PriceTable { markup_percent: markup_percent.filter(|m| *m != 0.0), ..self }
    }

    /// Where the built-in prices come from.
    pub fn source(&self) -> &TableSource {
        &self.snapshot.source
    }

    /// Every model of the built-in table that a provider llmtool knows serves, and every model
    /// the config file prices, as the provider's name and the model's name there, sorted.
    pub fn known_models(&self) -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = Vec::new();
        for (key, model) in &self.snapshot.models {
            for (name, prefix, names) in PROVIDERS {
                if let Some(bare) = key.strip_prefix(prefix) {
                    found.push(((*name).to_owned(), bare.to_owned()));
                } else if !key.contains('/') && names.contains(&model.provider.as_str()) {
                    found.push(((*name).to_owned(), key.clone()));
                }
            }
        }
        let configured = self.overrides.keys().filter_map(|key| key.split_once('/'));
        found.extend(configured.map(|(provider, model)| (provider.to_owned(), model.to_owned())));
        found.sort();
        found.dedup();
        found
    }

    /// The price of `provider`'s `model`, or `None` when it is unpriced.
    pub fn lookup(&self, provider: &str, model: &str) -> Option<PriceEntry> {
        if provider == "local" {
            return Some(PriceEntry::local(model));
        }
        let full = format!("{provider}/{model}");
        if let Some(price) = self.overrides.get(&full) {
            return Some(PriceEntry { entry: full, source: "config file".into(), price: *price });
        }
        let (_, prefix, names) = PROVIDERS.iter().find(|(name, ..)| *name == provider)?;
        let undated = without_date(model);
        for model in std::iter::once(model).chain(undated.as_deref()) {
            let prefixed = format!("{prefix}{model}");
            let found = self.snapshot.models.get_key_value(prefixed.as_str()).or_else(|| {
                let bare = self.snapshot.models.get_key_value(model)?;
                names.contains(&bare.1.provider.as_str()).then_some(bare)
            });
            if let Some((key, entry)) = found {
                let (price, source) = match self.markup_percent {
                    Some(markup) => (
                        entry.price().marked_up(markup),
                        format!("{} + {markup}% markup", self.snapshot.source),
                    ),
                    None => (entry.price(), self.snapshot.source.to_string()),
                };
                return Some(PriceEntry { entry: key.clone(), source, price });
            }
        }
        None
    }
}

/// `model` without a date or `-latest` at its end (`gpt-4o-2024-08-06`, `claude-3-5-haiku-20241022`,
/// `mistral-small-latest`), when it has one.
fn without_date(model: &str) -> Option<String> {
    if let Some(base) = model.strip_suffix("-latest") {
        return Some(base.to_owned());
    }
    let (base, last) = model.rsplit_once('-')?;
    // `-20241022`
    if last.len() == 8 && last.bytes().all(|b| b.is_ascii_digit()) {
        return Some(base.to_owned());
    }
    // `-2024-08-06`
    let mut parts = model.rsplitn(4, '-');
    let (day, month, year, base) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    (digits(year, 4) && digits(month, 2) && digits(day, 2)).then(|| base.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> PriceTable {
        PriceTable::new(HashMap::new())
    }

    #[test]
    fn the_snapshot_parses_and_names_its_source() {
        let table = table();
        assert_eq!(table.source().package, "litellm-core");
        assert!(table.snapshot.models.len() > 1000);
    }

    #[test]
    fn the_known_models_are_each_found_by_lookup() {
        let table = table();
        let known = table.known_models();
        assert!(known.contains(&("openai".to_owned(), "gpt-4o".to_owned())));
        assert!(known.contains(&("gemini".to_owned(), "gemini-2.5-flash".to_owned())));
        for (provider, model) in &known {
            assert!(table.lookup(provider, model).is_some(), "{provider}/{model}");
        }
    }

    #[test]
    fn models_are_found_under_prefixes_bare_and_without_dates() {
        let table = table();
        let found = |provider: &str, model: &str| table.lookup(provider, model).map(|e| e.entry);
        assert_eq!(found("openai", "gpt-4o").as_deref(), Some("gpt-4o"));
        assert_eq!(found("gemini", "gemini-2.5-flash").as_deref(), Some("gemini/gemini-2.5-flash"));
        assert_eq!(found("anthropic", "claude-sonnet-4-5").as_deref(), Some("claude-sonnet-4-5"));
        // A dated snapshot the table lacks is priced as its alias.
        assert_eq!(found("openai", "gpt-4o-2099-01-01").as_deref(), Some("gpt-4o"));
        assert_eq!(
            found("mistral", "mistral-small-latest").as_deref(),
            Some("mistral/mistral-small-latest")
        );
        // A bare key of another provider is not this provider's model.
        assert_eq!(found("groq", "gpt-4o"), None);
        // A server of the user's own is unpriced, not free.
        assert_eq!(found("my-server", "gpt-4o"), None);
        assert_eq!(found("openai", "no-such-model"), None);
        // The embedded model is free.
        assert_eq!(table.lookup("local", "qwen").map(|e| e.price.input), Some(0.0));
    }

    #[test]
    fn image_models_carry_the_prices_of_their_pictures() {
        let table = table();
        let gpt = table.lookup("openai", "gpt-image-1").unwrap().price;
        assert_eq!((gpt.image_output, gpt.output), (Some(4e-5), 4e-5), "{gpt:?}");
        let gemini = table.lookup("gemini", "gemini-2.5-flash-image").unwrap().price;
        assert_eq!((gemini.image_output, gemini.per_image), (Some(3e-5), Some(0.039)));
        // A text model has neither.
        let text = table.lookup("openai", "gpt-4o-mini").unwrap().price;
        assert_eq!((text.image_output, text.per_image), (None, None));
    }

    #[test]
    fn the_config_file_prices_over_the_table() {
        let mine = Price { input: 1e-6, output: 2e-6, ..Price::default() };
        let table = PriceTable::new(HashMap::from([("openai/gpt-4o".to_owned(), mine)]));
        let entry = table.lookup("openai", "gpt-4o").unwrap();
        assert_eq!((entry.entry.as_str(), entry.source.as_str()), ("openai/gpt-4o", "config file"));
        assert_eq!(entry.price, mine);
    }

    #[test]
    fn the_config_files_models_are_known_too() {
        let mine = Price { input: 1e-6, output: 2e-6, ..Price::default() };
        let table = PriceTable::new(HashMap::from([("work/house-model".to_owned(), mine)]));
        assert!(table.known_models().contains(&("work".to_owned(), "house-model".to_owned())));
        assert!(table.lookup("work", "house-model").is_some());
    }

    #[test]
    fn dates_are_recognised() {
        assert_eq!(without_date("gpt-4o-2024-08-06").as_deref(), Some("gpt-4o"));
        assert_eq!(without_date("claude-3-5-haiku-20241022").as_deref(), Some("claude-3-5-haiku"));
        assert_eq!(without_date("mistral-small-latest").as_deref(), Some("mistral-small"));
        assert_eq!(without_date("gpt-4o"), None);
        assert_eq!(without_date("llama-3.3-70b"), None);
    }
}
