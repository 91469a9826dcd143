//! Decode speed of the local engine, for `bench/local_decode.py`.
//!
//! usage: `decode_speed MODEL.gguf [LONG_PROMPT]` — prints JSON with the load time, the best
//! decode speed of three generations of 128 tokens on a short prompt, and, given a long prompt,
//! the speed at which it is read (one generation of one token, before the others).

use llmtool_local::chat::ChatMessage;
use llmtool_local::sampler::Sampling;
use llmtool_local::{GenerateOptions, LocalModel};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: decode_speed MODEL.gguf")?;
    let long_prompt = args.next();
    let mut model = LocalModel::load(std::path::Path::new(&path))?;
    let mut prefill = None;
    if let Some(prompt) = long_prompt {
        let messages = [ChatMessage::new("user", prompt)];
        let options = GenerateOptions {
            sampling: Sampling { temperature: 0.0, ..Sampling::default() },
            max_tokens: Some(1),
            grammar: None,
            tools: Vec::new(),
            cache_key: None,
        };
        let generation = model.generate(&messages, &options, &mut |_| {})?;
        prefill = Some((
            generation.prompt_tokens,
            generation.prompt_tokens as f64 / generation.prompt_time.as_secs_f64(),
        ));
    }
    let messages =
        [ChatMessage::new("user", "Write a long story about a robot who learns to paint.")];
    let options = GenerateOptions {
        sampling: Sampling { temperature: 0.0, ..Sampling::default() },
        max_tokens: Some(128),
        grammar: None,
        tools: Vec::new(),
        cache_key: None,
    };
    let mut best = 0.0f64;
    let mut last = None;
    for _ in 0..3 {
        let generation = model.generate(&messages, &options, &mut |_| {})?;
        best = best.max(generation.tokens_per_second);
        last = Some(generation);
    }
    let generation = last.ok_or("no run")?;
    println!(
        "{}",
        serde_json::json!({
            "load_ms": model.load_time.as_secs_f64() * 1000.0,
            "prompt_tokens": generation.prompt_tokens,
            "generated_tokens": generation.generated_tokens,
            "tokens_per_second": best,
            "long_prompt_tokens": prefill.map(|(tokens, _)| tokens),
            "prefill_tokens_per_second": prefill.map(|(_, speed)| speed),
        })
    );
    Ok(())
}
