//! Rows decoded together against one at a time, on the engine alone, for profiling
//! (`bench/batch_local.py` measures the same through `llmtool batch`).
//!
//! usage: `batch_speed MODEL.gguf [ROWS=32] [JOBS=1,8] [MAX_TOKENS=48]` — prints the seconds,
//! tokens and rows per second of `ROWS` prompts answered each of `JOBS` at a time (a row joins
//! as soon as another finishes), and whether the answers are the same.

use std::time::Instant;

use llmtool_local::chat::ChatMessage;
use llmtool_local::sampler::Sampling;
use llmtool_local::{GenerateOptions, LocalModel, Sequence};

const ITEMS: [&str; 8] = [
    "a red bicycle",
    "a wool scarf",
    "a ceramic teapot",
    "a pair of running shoes",
    "a desk lamp",
    "a leather wallet",
    "a garden hose",
    "a chess set",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: batch_speed MODEL.gguf [ROWS] [JOBS] [MAX_TOKENS]")?;
    let number = |value: Option<String>, default: usize| {
        value.and_then(|v| v.parse().ok()).unwrap_or(default)
    };
    let rows = number(args.next(), 32);
    let jobs: Vec<usize> = args
        .next()
        .unwrap_or_else(|| "1,8".to_owned())
        .split(',')
        .filter_map(|n| n.parse().ok())
        .collect();
    let max_tokens = number(args.next(), 48);
    let mut model = LocalModel::load(std::path::Path::new(&path))?;
    let options = GenerateOptions {
        sampling: Sampling { temperature: 0.0, ..Sampling::default() },
        max_tokens: Some(max_tokens),
        ..GenerateOptions::default()
    };
    let prompts: Vec<Vec<ChatMessage>> = (0..rows)
        .map(|n| {
            let text = format!(
                "Write one sentence that describes this product for a shop window: {} (model {n})",
                ITEMS[n % ITEMS.len()]
            );
            vec![ChatMessage::new("user", text)]
        })
        .collect();
    let mut report = Vec::new();
    let mut answers = Vec::new();
    for &jobs in &jobs {
        let started = Instant::now();
        let (texts, tokens) = together(&mut model, &prompts, &options, jobs)?;
        let seconds = started.elapsed().as_secs_f64();
        report.push(serde_json::json!({
            "jobs": jobs,
            "seconds": seconds,
            "rows_per_second": rows as f64 / seconds,
            "tokens_per_second": tokens as f64 / seconds,
            "tokens": tokens,
        }));
        answers.push(texts);
    }
    let same = answers.windows(2).all(|pair| pair[0] == pair[1]);
    println!("{}", serde_json::json!({ "runs": report, "same_answers": same }));
    Ok(())
}

/// Answers every prompt, `jobs` at a time, as the batcher does: (the answers, tokens decoded).
fn together(
    model: &mut LocalModel,
    prompts: &[Vec<ChatMessage>],
    options: &GenerateOptions,
    jobs: usize,
) -> Result<(Vec<String>, usize), Box<dyn std::error::Error>> {
    let mut waiting = prompts.iter().enumerate();
    let mut active: Vec<(usize, Sequence)> = Vec::new();
    let mut texts = vec![String::new(); prompts.len()];
    let mut tokens = 0;
    loop {
        let mut admitted = Vec::new();
        while active.len() + admitted.len() < jobs {
            let Some((index, messages)) = waiting.next() else { break };
            admitted.push((index, model.sequence(messages, options)?));
        }
        if !admitted.is_empty() {
            let mut sequences: Vec<&mut Sequence> = admitted.iter_mut().map(|(_, s)| s).collect();
            model.prefill(&mut sequences)?;
            active.extend(admitted);
        }
        if active.is_empty() {
            return Ok((texts, tokens));
        }
        let mut sequences: Vec<&mut Sequence> = active.iter_mut().map(|(_, s)| s).collect();
        model.step(&mut sequences, &mut |_, _| {})?;
        let (done, going): (Vec<_>, Vec<_>) =
            active.into_iter().partition(|(_, sequence)| sequence.finished());
        active = going;
        for (index, sequence) in done {
            let generation = sequence.into_generation(&mut |_| {});
            tokens += generation.generated_tokens;
            texts[index] = generation.text;
        }
    }
}
