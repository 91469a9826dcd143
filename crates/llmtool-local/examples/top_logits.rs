//! The engine's tokens and highest logits for texts, for comparing a model file with
//! llama.cpp (`scripts/compare_llama_cpp.py`).
//!
//! usage: `top_logits MODEL.gguf` with a JSON list of texts on standard input — prints, for
//! each text, its tokens (the model's beginning-of-text token first if it wants one) and the
//! ten highest logits after it, then after each of three greedy tokens fed one at a time.

use std::io::Read as _;

use llmtool_local::LocalModel;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: top_logits MODEL.gguf < texts.json")?;
    let mut model = LocalModel::load(std::path::Path::new(&path))?;
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    let texts: Vec<String> = serde_json::from_str(&input)?;
    let mut cases = Vec::new();
    for text in texts {
        let tokens = model.encode(&text)?;
        let (mut fed, mut position, mut steps) = (tokens.clone(), 0, Vec::new());
        for _ in 0..4 {
            let logits = model.logits(&fed, position)?;
            position += fed.len();
            let mut order: Vec<usize> = (0..logits.len()).collect();
            order.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]));
            let top: Vec<(usize, f32)> = order.iter().take(10).map(|&t| (t, logits[t])).collect();
            steps.push(serde_json::json!({ "top": top }));
            fed = vec![order[0] as u32];
        }
        cases.push(serde_json::json!({ "text": text, "tokens": tokens, "steps": steps }));
    }
    println!("{}", serde_json::to_string(&cases)?);
    Ok(())
}
