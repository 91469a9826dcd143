//! The tokenizer of a GGUF model, built from its metadata: GPT-2 style byte-level BPE
//! (`tokenizer.ggml.model` = `gpt2`: Qwen, Llama 3, SmolLM) or SentencePiece
//! (`llama`: Gemma, Phi-3, Llama 2), with the bytes each token stands for and whether the
//! model wants a beginning-of-text token before every prompt.

mod byte_level;
mod sentencepiece;

use tokenizers::Tokenizer;

use crate::LocalError;
use crate::gguf::{Content, Value};
use crate::metadata::{boolean, number, string};

/// GGUF's token types (`tokenizer.ggml.token_type`), as llama.cpp numbers them.
pub(crate) mod kind {
    pub(crate) const NORMAL: i32 = 1;
    pub(crate) const UNKNOWN: i32 = 2;
    /// Control tokens (`<|im_start|>`, `<start_of_turn>`), matched whole in text.
    pub(crate) const CONTROL: i32 = 3;
    pub(crate) const USER_DEFINED: i32 = 4;
    pub(crate) const UNUSED: i32 = 5;
    /// SentencePiece's byte tokens, `<0x0A>`.
    pub(crate) const BYTE: i32 = 6;
}

/// A model's tokenizer, and what decoding needs besides.
#[derive(Debug, Clone)]
pub struct Vocabulary {
    pub tokenizer: Tokenizer,
    /// The bytes each token stands for (empty for control tokens), for streaming the answer
    /// and for constrained decoding.
    pub bytes: Vec<Vec<u8>>,
    /// The beginning-of-text token, when the model wants one before every prompt
    /// (`tokenizer.ggml.add_bos_token`; SentencePiece models do unless they say otherwise).
    pub bos: Option<u32>,
}

impl Vocabulary {
    /// Builds the tokenizer of the model in `content`.
    pub(crate) fn from_gguf(content: &Content) -> Result<Self, LocalError> {
        let kind = string(content, "tokenizer.ggml.model").unwrap_or_default();
        let (tokenizer, bytes) = match kind.as_str() {
            "gpt2" => byte_level::from_gguf(content)?,
            "llama" => sentencepiece::from_gguf(content)?,
            _ => {
                return Err(LocalError::Model(format!(
                    "tokenizer `{kind}` is not supported; these are: gpt2 (byte-level BPE), llama (SentencePiece)"
                )));
            }
        };
        let wants_bos = boolean(content, "tokenizer.ggml.add_bos_token").unwrap_or(kind == "llama");
        let bos = number(content, "tokenizer.ggml.bos_token_id")
            .filter(|id| wants_bos && (*id as usize) < bytes.len());
        Ok(Self { tokenizer, bytes, bos })
    }

    /// The tokens of a prompt: its text tokenized with the control tokens in it matched,
    /// after the beginning-of-text token if the model wants one and the text (its chat
    /// template) has not put it there.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, LocalError> {
        let encoding =
            self.tokenizer.encode(text, false).map_err(|e| LocalError::Model(e.to_string()))?;
        let mut ids = encoding.get_ids().to_vec();
        if let Some(bos) = self.bos
            && ids.first() != Some(&bos)
        {
            ids.insert(0, bos);
        }
        Ok(ids)
    }
}

fn strings(content: &Content, key: &str) -> Result<Vec<String>, LocalError> {
    let Some(Value::Array(values)) = content.metadata.get(key) else {
        return Err(LocalError::Model(format!("the GGUF file has no `{key}`")));
    };
    values
        .iter()
        .map(|v| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| LocalError::Model(format!("`{key}` holds a non-string")))
        })
        .collect()
}

/// Each token's type; tokens the file gives no type are normal.
fn token_types(content: &Content, count: usize) -> Vec<i32> {
    let mut types = match content.metadata.get("tokenizer.ggml.token_type") {
        Some(Value::Array(values)) => values
            .iter()
            .map(|v| v.as_i64().and_then(|n| i32::try_from(n).ok()).unwrap_or(kind::NORMAL))
            .collect(),
        _ => Vec::new(),
    };
    types.resize(count, kind::NORMAL);
    types
}

/// The tokens matched whole in text before the rest is tokenized: control and user-defined.
fn specials(tokens: &[String], types: &[i32]) -> Vec<tokenizers::AddedToken> {
    types
        .iter()
        .zip(tokens)
        .filter(|(kind, _)| matches!(**kind, kind::CONTROL | kind::USER_DEFINED))
        .map(|(_, token)| tokenizers::AddedToken::from(token.clone(), true))
        .collect()
}
