//! Decode speed of the local engine, for `bench/local_decode.py`.
//!
//! usage: `decode_speed MODEL.gguf` — prints JSON with load time and tokens per second.

use llmtool_local::chat::ChatMessage;
use llmtool_local::sampler::Sampling;
use llmtool_local::{GenerateOptions, LocalModel};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: decode_speed MODEL.gguf")?;
    let mut model = LocalModel::load(std::path::Path::new(&path))?;
    let messages = [ChatMessage {
        role: "user".into(),
        content: "Write a long story about a robot who learns to paint.".into(),
    }];
    let options = GenerateOptions {
        sampling: Sampling { temperature: 0.0, ..Sampling::default() },
        max_tokens: Some(128),
        grammar: None,
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
        })
    );
    Ok(())
}
