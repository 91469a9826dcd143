//! Each architecture's forward pass against a plain NumPy one, on tiny random-weight GGUF
//! files written by the `gguf` package (`scripts/reference_models.py`, which the test command
//! runs into `LLMTOOL_REFERENCE_MODELS`): a prompt at once, then tokens one at a time, the
//! logits equal to within what quantizing the activations to 8 bits costs (the matrices are
//! Q8_0 in the file, and the reference computes with the same values).
//!
//! The Gemma and Phi-3 files carry SentencePiece vocabularies trained by Google's library,
//! and their tokenizations are checked against that library's.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::PathBuf;

use llmtool_local::model::LocalModel;

fn folder() -> PathBuf {
    std::env::var_os("LLMTOOL_REFERENCE_MODELS").map(PathBuf::from).expect(
        "LLMTOOL_REFERENCE_MODELS names the reference models (scripts/reference_models.py writes them)",
    )
}

/// Runs `architecture`'s model through the reference's steps, comparing logits.
fn matches_the_reference(architecture: &str) {
    let folder = folder();
    let mut model = LocalModel::load(&folder.join(format!("{architecture}.gguf"))).unwrap();
    let text = std::fs::read_to_string(folder.join(format!("{architecture}.json"))).unwrap();
    let reference: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut position = 0;
    for (index, step) in reference["steps"].as_array().unwrap().iter().enumerate() {
        let fed: Vec<u32> =
            step["fed"].as_array().unwrap().iter().map(|t| t.as_u64().unwrap() as u32).collect();
        let ours = model.logits(&fed, position).unwrap();
        position += fed.len();
        let theirs: Vec<f32> =
            step["logits"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
        assert_eq!(ours.len(), theirs.len(), "step {index}: vocabulary sizes");
        let dot: f32 = ours.iter().zip(&theirs).map(|(a, b)| a * b).sum();
        let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
        let cosine = dot / (norm(&ours) * norm(&theirs));
        let largest = theirs.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let worst = ours.iter().zip(&theirs).fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
        assert!(
            cosine > 0.999 && worst < 0.05 * largest,
            "{architecture}, step {index}: cosine {cosine}, largest difference {worst} of logits up to {largest}"
        );
        // The token we would pick scores, in the reference, as high as its best (to within
        // the same tolerance: random weights make near-ties).
        let ours_best = (0..ours.len()).max_by(|&a, &b| ours[a].total_cmp(&ours[b])).unwrap();
        let top = theirs.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        assert!(
            theirs[ours_best] > top - 0.05 * largest,
            "{architecture}, step {index}: our top token {ours_best} scores {} in the reference, whose best is {top}",
            theirs[ours_best]
        );
    }
}

#[test]
fn qwen2_matches_the_reference() {
    matches_the_reference("qwen2");
}

#[test]
fn llama3_matches_the_reference() {
    matches_the_reference("llama3");
}

#[test]
fn qwen3_matches_the_reference() {
    matches_the_reference("qwen3");
}

#[test]
fn gemma2_matches_the_reference() {
    matches_the_reference("gemma2");
}

#[test]
fn gemma3_matches_the_reference() {
    matches_the_reference("gemma3");
}

#[test]
fn phi3_matches_the_reference() {
    matches_the_reference("phi3");
}

/// The model's tokens for the reference's texts are SentencePiece's, and stand for the text's
/// bytes; after a control token a text is tokenized as at the start (llama.cpp's way, which
/// puts the prefix space there too); the beginning-of-text token comes first.
fn tokenizes_like_sentencepiece(architecture: &str, control: &str, space_prefix: bool) {
    let folder = folder();
    let model = LocalModel::load(&folder.join(format!("{architecture}.gguf"))).unwrap();
    let text = std::fs::read_to_string(folder.join(format!("{architecture}-tokens.json"))).unwrap();
    let cases: serde_json::Value = serde_json::from_str(&text).unwrap();
    let tokenizer = model.tokenizer();
    let bos = tokenizer.token_to_id("<s>").unwrap();
    let control_id = tokenizer.token_to_id(control).unwrap();
    let cases = cases.as_array().unwrap();
    assert!(cases.len() >= 10);
    for case in cases {
        let text = case["text"].as_str().unwrap();
        let expected: Vec<u32> =
            case["ids"].as_array().unwrap().iter().map(|id| id.as_u64().unwrap() as u32).collect();
        let ids = tokenizer.encode(text, false).unwrap().get_ids().to_vec();
        assert_eq!(ids, expected, "{architecture}: {text:?}");
        let bytes: Vec<u8> =
            ids.iter().flat_map(|&id| model.vocab()[id as usize].clone()).collect();
        let spaced =
            if space_prefix && !text.is_empty() { format!(" {text}") } else { text.into() };
        assert_eq!(String::from_utf8(bytes).unwrap(), spaced, "{architecture}: bytes of {text:?}");
        let after_control = model.encode(&format!("{control}{text}")).unwrap();
        assert_eq!(after_control, [[bos, control_id].as_slice(), &expected].concat(), "{text:?}");
    }
}

#[test]
fn gemma_tokenizes_like_sentencepiece_without_a_prefix_space() {
    tokenizes_like_sentencepiece("gemma3", "<start_of_turn>", false);
}

#[test]
fn phi3_tokenizes_like_sentencepiece_with_a_prefix_space() {
    tokenizes_like_sentencepiece("phi3", "<|user|>", true);
}
