//! What a run costs, as `run --usage` and `run --dry-run` show it on standard error.

use llmtool_providers::pricing::PriceEntry;
use llmtool_providers::run::{CHARACTERS_PER_TOKEN, RunReport, RunRequest};
use llmtool_runtime::worst_case::{self, Sending};

/// The request's input tokens and its worst-case cost, before it is sent. `counted` is the
/// exact count, when the model's tokenizer is at hand (the local model's).
pub(crate) fn worst_case_line(request: &RunRequest, counted: Option<usize>) -> String {
    let estimate = worst_case::estimate(request, counted, Sending::Run);
    let mut line = if estimate.counted {
        format!(
            "estimate: {} input tokens (counted with the model's tokenizer and chat template)",
            thousands(estimate.input_tokens)
        )
    } else {
        format!(
            "estimate: about {} input tokens ({} characters at {CHARACTERS_PER_TOKEN} per token, not the model's tokenizer)",
            thousands(estimate.input_tokens),
            request.first_message().chars().count()
        )
    };
    let Some(entry) = &request.price else {
        return line
            + "; cost: unpriced (the price table and the config file have no price for this model)";
    };
    match (estimate.output_limit, estimate.worst_cost) {
        (Some((output, from)), Some(worst)) => {
            line += &format!(
                "; at most {} output tokens ({from}); worst case {} ({})",
                thousands(output),
                dollars(worst),
                price_name(entry)
            );
        }
        _ => line += "; no output limit known, so no worst case",
    }
    line
}

/// The tokens, cost and latency of a run.
pub(crate) fn summary(report: &RunReport) -> String {
    let usage = &report.usage;
    let count = |n: Option<u64>| n.map_or_else(|| "?".to_owned(), thousands);
    let mut line = format!("usage: {} input tokens", count(usage.input_tokens));
    if let Some(cached) = usage.cached_input_tokens.filter(|n| *n > 0) {
        line += &format!(" ({} cached)", thousands(cached));
    }
    line += &format!(", {} output", count(usage.output_tokens));
    if let Some(reasoning) = usage.reasoning_tokens.filter(|n| *n > 0) {
        line += &format!(" ({} reasoning)", thousands(reasoning));
    }
    match (report.cost, &report.price) {
        (Some(cost), Some(entry)) => {
            line += &format!("; cost {} ({})", dollars(cost), price_name(entry))
        }
        (None, Some(_)) => line += "; cost unknown (the provider reported no usage)",
        (_, None) => line += "; cost: unpriced",
    }
    line + &format!("; {} ms", thousands(report.latency_ms))
}

fn price_name(entry: &PriceEntry) -> String {
    format!("{} in {}", entry.entry, entry.source)
}

pub(crate) use llmtool_providers::pricing::dollars;

/// `1234567` as `1,234,567`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(dollars(0.000_125), "$0.000125");
        assert_eq!(dollars(12.5), "$12.50");
        assert_eq!(dollars(0.0), "$0");
    }
}
