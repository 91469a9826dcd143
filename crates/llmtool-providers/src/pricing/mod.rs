//! What a run costs: the price of a model per token class, the tokens a run used by class, and
//! the cost of the one at the other. Prices come from the table LiteLLM publishes (a snapshot
//! in `data/prices.json`, see [`table`]) with the user's config file over it.

pub mod table;

use serde::Serialize;

pub use table::{PriceTable, TableSource};

/// US dollars per token, by token class. A class with no price of its own is billed as the
/// class it belongs to: cached and cache-write input as input, reasoning as output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Price {
    pub input: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_input: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
    pub output: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<f64>,
    /// The prices of the provider's batch engine, when the table has them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_input: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_output: Option<f64>,
    /// The longest answer the model gives, for a worst case when a request sets no limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output: Option<u64>,
    /// The longest prompt it takes, in tokens (its context window's input side): a longer one
    /// is not sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_input: Option<u64>,
    /// An image model's output tokens, the pictures' own (OpenAI's GPT image models count
    /// their pictures in tokens; so does Gemini), when they are priced apart from text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_output: Option<f64>,
    /// US dollars per picture (not per token): what an image tool's run costs when its answer
    /// counts no output tokens (DALL-E 3, many OpenAI-compatible servers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_image: Option<f64>,
}

/// How the tokens are sent: one request at a time, or through the provider's batch engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Billing {
    Standard,
    Batch,
}

/// The tokens of a run, by class. `input` counts every input token, the cached ones and the
/// ones written to the cache included; `output` counts every output token, reasoning included.
/// Each provider's client reports its own usage in these terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tokens {
    pub input: u64,
    pub cached_input: u64,
    pub cache_write: u64,
    pub output: u64,
    pub reasoning: u64,
}

impl Price {
    /// This price raised by `percent` (every class; the limits kept).
    #[must_use]
    pub fn marked_up(&self, percent: f64) -> Price {
        let factor = 1.0 + percent / 100.0;
        let raise = |amount: f64| amount * factor;
        Price {
            input: raise(self.input),
            cached_input: self.cached_input.map(raise),
            cache_write: self.cache_write.map(raise),
            output: raise(self.output),
            reasoning: self.reasoning.map(raise),
            batch_input: self.batch_input.map(raise),
            batch_output: self.batch_output.map(raise),
            image_output: self.image_output.map(raise),
            per_image: self.per_image.map(raise),
            ..*self
        }
    }

    /// What an image tool's run costs, for `tokens` (as its answer counted them, if it did)
    /// and the `pictures` it made: its output tokens at the image-token price (else the
    /// output price); when the answer counts no output tokens, or the model has a per-picture
    /// price and no image-token price, each picture at the per-picture price, with the input
    /// tokens it counted. `None` when neither is known.
    pub fn image_cost(&self, tokens: Option<&Tokens>, pictures: u64) -> Option<f64> {
        let as_pictures = Price { output: self.image_output.unwrap_or(self.output), ..*self };
        // A model priced by the picture and not by its picture tokens is billed by the
        // picture, whatever tokens its answer counts.
        let by_tokens = self.image_output.is_some() || self.per_image.is_none();
        match tokens {
            Some(tokens) if tokens.output > 0 && by_tokens => {
                Some(as_pictures.cost(tokens, Billing::Standard))
            }
            _ => {
                let input =
                    Tokens { output: 0, reasoning: 0, ..tokens.copied().unwrap_or_default() };
                let per_image = self.per_image?;
                Some(as_pictures.cost(&input, Billing::Standard) + per_image * pictures as f64)
            }
        }
    }

    /// What `tokens` cost in US dollars.
    pub fn cost(&self, tokens: &Tokens, billing: Billing) -> f64 {
        let (input, output) = match billing {
            Billing::Standard => (self.input, self.output),
            Billing::Batch => {
                (self.batch_input.unwrap_or(self.input), self.batch_output.unwrap_or(self.output))
            }
        };
        // Reported classes never exceed their totals, but a server's numbers are not trusted.
        let cached = tokens.cached_input.min(tokens.input);
        let written = tokens.cache_write.min(tokens.input - cached);
        let plain_input = tokens.input - cached - written;
        let reasoning = tokens.reasoning.min(tokens.output);
        let plain_output = tokens.output - reasoning;
        plain_input as f64 * input
            + cached as f64 * self.cached_input.unwrap_or(input)
            + written as f64 * self.cache_write.unwrap_or(input)
            + plain_output as f64 * output
            + reasoning as f64 * self.reasoning.unwrap_or(output)
    }
}

/// The price used for a model, and where it was found.
impl Price {
    /// A price of the config file (US dollars per million tokens, as providers list them) per
    /// token, with its own markup, else the config's `markup_percent`.
    pub fn from_config(price: &llmtool_config::Price, markup_percent: Option<f64>) -> Self {
        let factor = 1.0 + price.markup_percent.or(markup_percent).unwrap_or(0.0) / 100.0;
        let per_token = |million: f64| million / 1_000_000.0 * factor;
        Self {
            input: per_token(price.input),
            cached_input: price.cached_input.map(per_token),
            cache_write: price.cache_write.map(per_token),
            output: per_token(price.output),
            reasoning: price.reasoning.map(per_token),
            batch_input: price.batch_input.map(per_token),
            batch_output: price.batch_output.map(per_token),
            max_output: None,
            max_input: price.max_input,
            image_output: price.image_output.map(per_token),
            per_image: price.per_image.map(|each| each * factor),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PriceEntry {
    /// The entry's name where it was found: a key of the table (`gpt-4o`,
    /// `gemini/gemini-2.5-flash`) or of the config file's `[prices]` (`openai/gpt-4o`).
    pub entry: String,
    /// `litellm-core 1.106.4 (2026-11-28)`, `config file`, or `local model`.
    pub source: String,
    #[serde(flatten)]
    pub price: Price,
}

impl PriceEntry {
    /// The embedded local model runs on this machine: it costs nothing.
    pub fn local(model: &str) -> Self {
        PriceEntry {
            entry: model.to_owned(),
            source: "local model".into(),
            price: Price::default(),
        }
    }
}

/// US dollars as every report shows them: `$0` for nothing, cents for a dollar or more
/// (`$1.25`), and six decimals below (`$0.000125`), so that one run's cost is never `$0.00`.
pub fn dollars(amount: f64) -> String {
    if amount == 0.0 {
        "$0".to_owned()
    } else if amount.abs() >= 1.0 {
        format!("${amount:.2}")
    } else {
        format!("${amount:.6}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_price_per_million_becomes_a_price_per_token_with_its_markup() {
        let config = llmtool_config::Config::parse(
            "markup_percent = 10\n[prices.\"openai/gpt-4o-mini\"]\ninput = 0.15\noutput = 0.6\n\
             [prices.\"work/own\"]\ninput = 1\noutput = 2\nmarkup_percent = 50\n",
        )
        .unwrap();
        let tokens = Tokens { input: 1_000_000, output: 1_000_000, ..Default::default() };
        let cost = |key: &str| {
            Price::from_config(&config.prices[key], config.markup_percent)
                .cost(&tokens, Billing::Standard)
        };
        assert!((cost("openai/gpt-4o-mini") - 0.825).abs() < 1e-9, "the config's markup");
        assert!((cost("work/own") - 4.5).abs() < 1e-9, "a price's own markup wins");
    }

    #[test]
    fn each_class_is_billed_at_its_own_price_or_its_parent_class() {
        let price = Price {
            input: 2.0,
            cached_input: Some(0.5),
            cache_write: None,
            output: 10.0,
            reasoning: Some(20.0),
            batch_input: Some(1.0),
            batch_output: None,
            max_output: None,
            max_input: None,
            image_output: None,
            per_image: None,
        };
        let tokens =
            Tokens { input: 100, cached_input: 40, cache_write: 10, output: 30, reasoning: 5 };
        // 50 plain input at 2, 40 cached at 0.5, 10 written at the input price, 25 output at
        // 10, 5 reasoning at 20.
        assert!((price.cost(&tokens, Billing::Standard) - 490.0).abs() < 1e-9);
        // Batch: input at 1 (cached stays at its own price), output at its standard price.
        assert!((price.cost(&tokens, Billing::Batch) - (60.0 + 20.0 + 350.0)).abs() < 1e-9);
        // Classes larger than their totals are capped.
        let odd = Tokens { input: 1, cached_input: 5, cache_write: 5, output: 1, reasoning: 9 };
        assert!((price.cost(&odd, Billing::Standard) - (0.5 + 20.0)).abs() < 1e-9);
    }

    #[test]
    fn an_image_run_is_billed_by_its_picture_tokens_else_by_the_picture() {
        let price = Price {
            input: 5e-6,
            output: 1e-5,
            image_output: Some(4e-5),
            per_image: Some(0.04),
            ..Price::default()
        };
        // GPT image models count the pictures' tokens: those, at the image-token price.
        let counted = Tokens { input: 20, output: 4160, ..Tokens::default() };
        let cost = price.image_cost(Some(&counted), 1).unwrap();
        assert!((cost - (20.0 * 5e-6 + 4160.0 * 4e-5)).abs() < 1e-12, "{cost}");
        // No output tokens counted: each picture at its price, the input as counted.
        let input_only = Tokens { input: 20, ..Tokens::default() };
        let cost = price.image_cost(Some(&input_only), 2).unwrap();
        assert!((cost - (20.0 * 5e-6 + 0.08)).abs() < 1e-12, "{cost}");
        assert!((price.image_cost(None, 3).unwrap() - 0.12).abs() < 1e-12);
        // Priced by the picture alone (Gemini's older image model): by the picture, even
        // when the answer counts its tokens.
        let by_picture = Price { image_output: None, output: 0.0, ..price };
        let cost = by_picture.image_cost(Some(&counted), 2).unwrap();
        assert!((cost - (20.0 * 5e-6 + 0.08)).abs() < 1e-12, "{cost}");
        // Without a picture price, a run that counted nothing has no known cost.
        let tokens_only = Price { per_image: None, ..price };
        assert_eq!(tokens_only.image_cost(None, 1), None);
        // No image-token price: the output price; a markup raises both picture prices.
        let plain = Price { image_output: None, per_image: None, ..price };
        assert!(
            (plain.image_cost(Some(&counted), 1).unwrap() - (1e-4 + 4160.0 * 1e-5)).abs() < 1e-12
        );
        let raised = price.marked_up(50.0);
        assert!((raised.per_image.unwrap() - 0.06).abs() < 1e-12);
        assert!((raised.image_output.unwrap() - 6e-5).abs() < 1e-12);
    }
}
