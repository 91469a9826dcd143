//! The one rule for what a run may cost at most, known before anything is sent: `run
//! --dry-run` and `batch --estimate` show it, `batch --max-cost` and provider batches send only
//! what surely fits under it, and a server reserves it against a budget before a run starts.

use llmtool_format::output::{ImageParams, OutputKind};
use llmtool_providers::pricing::Tokens;
use llmtool_providers::run::{MOST_PICTURE_TOKENS, RunOptions, RunRequest, estimated_tokens};

/// How a request is sent, which says how often it may be paid for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sending {
    /// As a run: asked again, with the answers before, for each repair of its expected output.
    Run,
    /// Once, as a row of a provider's batch: its answer is kept as it comes.
    Once,
}

/// What a request may cost, known before it is sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The prompt's tokens: counted with the model's tokenizer, else estimated from its
    /// characters ([`llmtool_providers::run::CHARACTERS_PER_TOKEN`]), what is shown.
    pub input_tokens: u64,
    /// Whether `input_tokens` was counted.
    pub counted: bool,
    /// The most output tokens, and where that limit comes from (`max_tokens`, or the model's
    /// longest answer).
    pub output_limit: Option<(u64, &'static str)>,
    /// The most the run may cost; `None` when the model is unpriced or no output limit is
    /// known.
    pub worst_cost: Option<f64>,
}

/// What `request` may cost at most, sent as `sending` says. `counted` is the prompt's exact
/// token count, when the model's tokenizer is at hand (the local model's).
///
/// The prompt is bounded by its bytes (a token is at least one byte, whatever the language)
/// unless counted, priced at the dearer of the input and cache-write prices; the answer is as
/// long as allowed, at the dearer of the output and reasoning prices; a run is paid for once,
/// then again for each repair, each time with the answers before. An image tool's run is
/// asked once, for the pictures it asks for at their most tokens (or their price each, when
/// dearer).
pub fn estimate(request: &RunRequest, counted: Option<usize>, sending: Sending) -> Estimate {
    let messages = request.messages();
    let (input_tokens, is_counted) = match counted {
        Some(tokens) => (tokens as u64, true),
        None => (estimated_tokens(&messages), false),
    };
    // The prompt's most tokens: its count, else its bytes.
    let bound = match counted {
        Some(tokens) => tokens as u64,
        None => messages.iter().map(|message| message.content.len() as u64).sum(),
    };
    if matches!(request.spec.kind, OutputKind::Image(_)) {
        let worst_cost = image_worst_cost(request, bound);
        let most = pictures(request).1;
        let output_limit = Some((most, "the most tokens the pictures asked for are counted as"));
        return Estimate { input_tokens, counted: is_counted, output_limit, worst_cost };
    }
    let output_limit = request.params.max_tokens.map(|n| (n, "max_tokens")).or_else(|| {
        let longest = request.price.as_ref().and_then(|entry| entry.price.max_output);
        longest.map(|n| (n, "the longest answer of the model"))
    });
    let worst_cost = match (&request.price, output_limit) {
        (Some(entry), Some((output, _))) => {
            let price = &entry.price;
            let input_price = price.input.max(price.cache_write.unwrap_or(0.0));
            let output_price = price.output.max(price.reasoning.unwrap_or(0.0));
            let attempts = match sending {
                Sending::Run => u64::from(RunOptions::streamed(true).max_repairs) + 1,
                Sending::Once => 1,
            };
            let cost = (0..attempts)
                .map(|attempt| {
                    let input = bound.saturating_add(attempt.saturating_mul(output));
                    input as f64 * input_price + output as f64 * output_price
                })
                .sum();
            Some(cost)
        }
        _ => None,
    };
    Estimate { input_tokens, counted: is_counted, output_limit, worst_cost }
}

/// The pictures an image tool's request asks for, and the most output tokens they are counted
/// as ([`MOST_PICTURE_TOKENS`] each).
fn pictures(request: &RunRequest) -> (u64, u64) {
    let pictures = ImageParams::from_extra(&request.params.extra).count.unwrap_or(1).max(1);
    (pictures, pictures.saturating_mul(MOST_PICTURE_TOKENS))
}

/// The most an image tool's run costs, its prompt taking at most `input` tokens: its pictures
/// at their most tokens at the picture-token price, or at the per-picture price when that is
/// dearer.
fn image_worst_cost(request: &RunRequest, input: u64) -> Option<f64> {
    let (pictures, most) = pictures(request);
    let entry = request.price.as_ref()?;
    let input = Tokens { input, ..Default::default() };
    let output = Tokens { output: most, ..input };
    let by_tokens = entry.price.image_cost(Some(&output), pictures);
    let by_picture = entry.price.image_cost(Some(&input), pictures);
    by_tokens.into_iter().chain(by_picture).reduce(f64::max)
}
