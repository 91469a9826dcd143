//! Time to first token of a conversation's follow-up on the local engine: starting from the
//! keys and values its turn before left (what `llmtool chat` and a server do) against
//! computing the whole history again, for `bench/follow_up.sh`.
//!
//! usage: `follow_up_ttft MODEL.gguf [ROUNDS=5]` — prints JSON with both medians and the
//! ratio. Each round runs the tool's turn, then the follow-up twice: once as it comes, once
//! after the engine forgot the turn before.

use std::time::Duration;

use llmtool_local::chat::ChatMessage;
use llmtool_local::sampler::Sampling;
use llmtool_local::{GenerateOptions, LocalModel};

/// A tool's prompt of the size the built-in examples render to (about 300 tokens).
const PROMPT: &str = "You are a strategy consultant. A regional bakery chain with twelve shops, a central kitchen and a small catering arm has seen sales fall eight percent this year while its costs for flour, butter and energy rose by a fifth. Two competitors opened near its busiest shops, and its delivery partner raised fees. The owners are weighing three options: close the four weakest shops, move upmarket with a premium line and higher prices, or grow the catering arm into offices and events. Lay out a plan: first the one question that decides between the options, then what to measure in the next month, then a recommendation with its risks and what would change your mind. Keep it concrete, name numbers where you can, and write for owners who are bakers rather than analysts. End with the three actions to take this week.";

fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1000.0
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: follow_up_ttft MODEL.gguf [ROUNDS]")?;
    let rounds: usize = args.next().map_or(Ok(5), |n| n.parse())?;
    let mut model = LocalModel::load(std::path::Path::new(&path))?;
    let options = GenerateOptions {
        sampling: Sampling { temperature: 0.0, ..Sampling::default() },
        max_tokens: Some(128),
        grammar: None,
        tools: Vec::new(),
        cache_key: Some("bench".into()),
    };
    let user = |text: &str| ChatMessage::new("user", text);
    let first = [user(PROMPT)];
    let (mut reused, mut recomputed) = (Vec::new(), Vec::new());
    let mut history_tokens = 0;
    for _ in 0..rounds {
        let answer = model.generate(&first, &options, &mut |_| {})?;
        let conversation = [
            user(PROMPT),
            ChatMessage::new("assistant", answer.text),
            user("Why that recommendation rather than the others?"),
        ];
        let follow_up = model.generate(&conversation, &options, &mut |_| {})?;
        reused.push(follow_up.prompt_time);
        history_tokens = follow_up.prompt_tokens;
        // The same turn again, its follow-up computed whole.
        let _ = model.generate(&first, &options, &mut |_| {})?;
        model.forget_last_prompt();
        let whole = model.generate(&conversation, &options, &mut |_| {})?;
        recomputed.push(whole.prompt_time);
    }
    let (reused, recomputed) = (median(reused), median(recomputed));
    println!(
        "{}",
        serde_json::json!({
            "history_tokens": history_tokens,
            "rounds": rounds,
            "follow_up_ttft_ms_reused": reused,
            "follow_up_ttft_ms_recomputed": recomputed,
            "ratio": recomputed / reused,
        })
    );
    Ok(())
}
