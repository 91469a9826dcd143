//! GPT-2 style byte-level BPE from a GGUF file's metadata: the vocabulary, the merges, the
//! control tokens and the pre-tokenizer named by `tokenizer.ggml.pre`.
//!
//! candle ships a builder too, but it applies a GPT-2 default (a prefix space, no digit
//! splitting) to pre-tokenizers it does not know, which tokenizes SmolLM's `smollm` differently
//! from llama.cpp and from the model's own training; this one matches llama.cpp, as the test
//! against its tokenizations shows.

use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::BPE;
use tokenizers::normalizers::unicode::NFC;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::{PreTokenizerWrapper, SplitDelimiterBehavior, Tokenizer};

use super::{kind, specials, strings, token_types};
use crate::LocalError;
use crate::gguf::Content;
use crate::metadata::string;

/// The llama-3 pre-tokenization pattern (also used by Smaug).
const LLAMA3: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// The Qwen2 pattern: digits one by one.
const QWEN2: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// The tokenizer of the model in `content`, and each token's bytes.
pub(super) fn from_gguf(content: &Content) -> Result<(Tokenizer, Vec<Vec<u8>>), LocalError> {
    let tokens = strings(content, "tokenizer.ggml.tokens")?;
    let merges: Vec<(String, String)> = strings(content, "tokenizer.ggml.merges")?
        .into_iter()
        .filter_map(|merge| merge.split_once(' ').map(|(a, b)| (a.to_owned(), b.to_owned())))
        .collect();
    let vocab: tokenizers::models::bpe::Vocab =
        tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
    let bpe = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .build()
        .map_err(|e| LocalError::Model(format!("the vocabulary is not usable: {e}")))?;
    let mut tokenizer = Tokenizer::new(bpe);
    let pre = string(content, "tokenizer.ggml.pre").unwrap_or_else(|| "gpt2".into());
    let split = |pattern: &str| -> Result<PreTokenizerWrapper, LocalError> {
        let split = Split::new(
            SplitPattern::Regex(pattern.into()),
            SplitDelimiterBehavior::Isolated,
            false,
        )
        .map_err(|e| LocalError::Model(e.to_string()))?;
        Ok(split.into())
    };
    let pre_tokenizer: PreTokenizerWrapper = match pre.as_str() {
        "smollm" => {
            Sequence::new(vec![Digits::new(true).into(), ByteLevel::new(false, true, true).into()])
                .into()
        }
        "llama3" | "llama-bpe" | "smaug-bpe" => {
            Sequence::new(vec![split(LLAMA3)?, ByteLevel::new(false, true, false).into()]).into()
        }
        "qwen2" => {
            tokenizer.with_normalizer(Some(NFC)).map_err(|e| LocalError::Model(e.to_string()))?;
            Sequence::new(vec![split(QWEN2)?, ByteLevel::new(false, true, false).into()]).into()
        }
        _ => ByteLevel::new(false, true, true).into(),
    };
    tokenizer.with_pre_tokenizer(Some(pre_tokenizer));
    tokenizer.with_decoder(Some(ByteLevelDecoder::default()));
    let types = token_types(content, tokens.len());
    tokenizer
        .add_special_tokens(specials(&tokens, &types))
        .map_err(|e| LocalError::Model(e.to_string()))?;
    Ok((tokenizer, token_bytes(&tokens, &types)))
}

/// The bytes each token stands for (none for control tokens; a user-defined one its text).
///
/// Byte-level BPE writes every byte as a printable character: bytes that are printable Latin-1
/// stand for themselves, the other 68 are mapped in order to U+0100 and up. This inverts that.
fn token_bytes(tokens: &[String], types: &[i32]) -> Vec<Vec<u8>> {
    let mut char_to_byte = std::collections::HashMap::with_capacity(256);
    let mut shifted = 0u32;
    for byte in 0u8..=255 {
        let printable = matches!(byte, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
        let c = if printable {
            char::from(byte)
        } else {
            shifted += 1;
            char::from_u32(255 + shifted).unwrap_or('\u{fffd}')
        };
        char_to_byte.insert(c, byte);
    }
    tokens
        .iter()
        .zip(types)
        .map(|(token, token_type)| {
            // As llama.cpp writes them: a control token is no text, a user-defined one (Qwen's
            // `<tool_call>`) is its own text as written, not byte-mapped.
            match *token_type {
                kind::CONTROL => return Vec::new(),
                kind::USER_DEFINED => return token.as_bytes().to_vec(),
                _ => {}
            }
            token
                .chars()
                .map(|c| char_to_byte.get(&c).copied())
                .collect::<Option<Vec<u8>>>()
                .unwrap_or_default()
        })
        .collect()
}
