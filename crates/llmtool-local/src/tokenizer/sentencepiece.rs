//! SentencePiece vocabularies (`tokenizer.ggml.model` = `llama`: Gemma, Phi-3, Llama 2) from
//! a GGUF file's pieces, scores and types.
//!
//! SentencePiece's BPE joins, again and again, the neighbouring pair whose joined text is the
//! piece with the highest score (the leftmost of equal pairs), starting from characters;
//! characters that are no piece become byte tokens (`<0xE6>`). GGUF keeps the pieces and their
//! scores but no merge list, so the merges are derived here: every way of cutting a piece in
//! two known pieces, ranked by that piece's score. The `tokenizers` crate's BPE model with byte
//! fallback then tokenizes exactly as SentencePiece does (the test against Google's library
//! shows it), as Hugging Face's own converter of SentencePiece models does.
//!
//! Spaces are written `▁`. A model that puts a space before its text (`add_space_prefix`,
//! llama's and Phi-3's way; not Gemma's) gets one before every run of text between control
//! tokens, as llama.cpp does.
//!
//! Deriving the merges costs the square of a piece's length, so pieces longer than
//! [`LONGEST_CUT`] characters are never cut (SentencePiece keeps pieces to 16 characters unless
//! told otherwise: Gemma 3's longest normal piece has 16), and a file whose pieces give more than [`MERGES_PER_PIECE`] merges each on
//! average is refused.

use std::collections::HashMap;

use tokenizers::decoders::byte_fallback::ByteFallback;
use tokenizers::decoders::fuse::Fuse;
use tokenizers::decoders::sequence::Sequence as Decoders;
use tokenizers::decoders::strip::Strip;
use tokenizers::models::bpe::BPE;
use tokenizers::normalizers::{Prepend, Replace, Sequence as Normalizers};
use tokenizers::{DecoderWrapper, NormalizerWrapper, Tokenizer};

use super::{kind, specials, strings, token_types};
use crate::LocalError;
use crate::gguf::{Content, Value};
use crate::metadata::{as_float, boolean};

/// How SentencePiece writes a space.
const SPACE: char = '▁';

/// The longest piece, in characters, whose cuts become merges.
const LONGEST_CUT: usize = 64;

/// The most merges a vocabulary may give per piece, on average.
const MERGES_PER_PIECE: usize = 8;

/// The tokenizer of the model in `content`, and each token's bytes.
pub(super) fn from_gguf(content: &Content) -> Result<(Tokenizer, Vec<Vec<u8>>), LocalError> {
    let pieces = strings(content, "tokenizer.ggml.tokens")?;
    let types = token_types(content, pieces.len());
    let scores = scores(content, pieces.len())?;
    let space_prefix = boolean(content, "tokenizer.ggml.add_space_prefix").unwrap_or(true);
    let ids: HashMap<&str, u32> =
        pieces.iter().enumerate().map(|(id, piece)| (piece.as_str(), id as u32)).collect();
    let merges = merges(&pieces, &types, &scores, &ids);
    if merges.len() > MERGES_PER_PIECE * pieces.len().max(1) {
        return Err(LocalError::Model(format!(
            "the vocabulary's {} pieces give {} merges: not a SentencePiece vocabulary this engine reads",
            pieces.len(),
            merges.len()
        )));
    }
    let vocab: tokenizers::models::bpe::Vocab =
        pieces.iter().enumerate().map(|(id, piece)| (piece.clone(), id as u32)).collect();
    let mut builder = BPE::builder().vocab_and_merges(vocab, merges);
    builder = builder.byte_fallback(true);
    if let Some(unknown) = types.iter().position(|t| *t == kind::UNKNOWN) {
        builder = builder.unk_token(pieces[unknown].clone());
    }
    let bpe = builder
        .build()
        .map_err(|e| LocalError::Model(format!("the vocabulary is not usable: {e}")))?;
    let mut tokenizer = Tokenizer::new(bpe);
    let error = |e: tokenizers::Error| LocalError::Model(e.to_string());
    let mut normalizers: Vec<NormalizerWrapper> = Vec::new();
    if space_prefix {
        normalizers.push(Prepend::new(SPACE.to_string()).into());
    }
    normalizers.push(Replace::new(" ", SPACE.to_string()).map_err(error)?.into());
    tokenizer.with_normalizer(Some(Normalizers::new(normalizers))).map_err(error)?;
    let mut decoders: Vec<DecoderWrapper> = vec![
        Replace::new(SPACE.to_string(), " ").map_err(error)?.into(),
        ByteFallback::new().into(),
        Fuse::new().into(),
    ];
    if space_prefix {
        decoders.push(Strip::new(' ', 1, 0).into());
    }
    tokenizer.with_decoder(Some(Decoders::new(decoders)));
    tokenizer.add_special_tokens(specials(&pieces, &types)).map_err(error)?;
    Ok((tokenizer, token_bytes(&pieces, &types)))
}

fn scores(content: &Content, count: usize) -> Result<Vec<f32>, LocalError> {
    let Some(Value::Array(values)) = content.metadata.get("tokenizer.ggml.scores") else {
        return Err(LocalError::Model("the GGUF file has no `tokenizer.ggml.scores`".into()));
    };
    if values.len() != count {
        return Err(LocalError::Model(format!(
            "the GGUF file scores {} of its {count} tokens",
            values.len()
        )));
    }
    values
        .iter()
        .map(|v| {
            as_float(v).ok_or_else(|| {
                LocalError::Model("`tokenizer.ggml.scores` holds a non-number".into())
            })
        })
        .collect()
}

/// Every cut of a normal piece into two pieces, the best-scored pieces' cuts first (pieces of
/// equal score by id, where SentencePiece would take the leftmost pair: real vocabularies
/// score each piece differently). The cuts of one piece share its rank in SentencePiece; at
/// most one of them can apply at a place in the text, so their order does not matter.
fn merges(
    pieces: &[String],
    types: &[i32],
    scores: &[f32],
    ids: &HashMap<&str, u32>,
) -> Vec<(String, String)> {
    let mut ranked: Vec<usize> =
        (0..pieces.len()).filter(|&id| types[id] == kind::NORMAL).collect();
    ranked.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let mut merges = Vec::new();
    for id in ranked {
        let piece = &pieces[id];
        if piece.chars().nth(LONGEST_CUT).is_some() {
            continue;
        }
        for (cut, _) in piece.char_indices().skip(1) {
            let (left, right) = piece.split_at(cut);
            if ids.contains_key(left) && ids.contains_key(right) {
                merges.push((left.to_owned(), right.to_owned()));
            }
        }
    }
    merges
}

/// The bytes each token stands for: a byte token its byte, a normal or user-defined piece its
/// text with `▁` as a space, the rest (control, unknown, unused) none.
fn token_bytes(pieces: &[String], types: &[i32]) -> Vec<Vec<u8>> {
    pieces
        .iter()
        .zip(types)
        .map(|(piece, token_type)| match *token_type {
            kind::BYTE => piece
                .strip_prefix("<0x")
                .and_then(|hex| hex.strip_suffix('>'))
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                .map(|byte| vec![byte])
                .unwrap_or_default(),
            kind::CONTROL | kind::UNKNOWN | kind::UNUSED => Vec::new(),
            _ => piece.replace(SPACE, " ").into_bytes(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_piece_is_cut_every_way_its_halves_are_pieces_and_better_pieces_merge_first() {
        let pieces: Vec<String> =
            ["a", "b", "c", "ab", "bc", "abc"].iter().map(ToString::to_string).collect();
        let types = vec![kind::NORMAL; pieces.len()];
        let scores = [0.0, 0.0, 0.0, -2.0, -1.0, -3.0];
        let ids = pieces.iter().enumerate().map(|(i, p)| (p.as_str(), i as u32)).collect();
        let merges = merges(&pieces, &types, &scores, &ids);
        let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
        assert_eq!(
            merges,
            [pair("b", "c"), pair("a", "b"), pair("a", "bc"), pair("ab", "c")],
            "bc scores above ab, and abc has two cuts"
        );
    }

    #[test]
    fn pieces_longer_than_the_bound_are_never_cut() {
        let pieces: Vec<String> = [1, LONGEST_CUT - 1, LONGEST_CUT, LONGEST_CUT + 1]
            .iter()
            .map(|&n| "a".repeat(n))
            .collect();
        let types = vec![kind::NORMAL; pieces.len()];
        let ids = pieces.iter().enumerate().map(|(i, p)| (p.as_str(), i as u32)).collect();
        let merges = merges(&pieces, &types, &[0.0; 4], &ids);
        let longest = merges.iter().map(|(a, b)| a.len() + b.len()).max();
        assert_eq!(
            longest,
            Some(LONGEST_CUT),
            "the piece of {LONGEST_CUT} is cut, not the longer one"
        );
    }

    #[test]
    fn byte_tokens_stand_for_their_byte_and_spaces_are_spaces() {
        let pieces: Vec<String> =
            ["<0x0A>", "▁the", "<s>", "<0xZZ>"].iter().map(ToString::to_string).collect();
        let types = [kind::BYTE, kind::NORMAL, kind::CONTROL, kind::BYTE];
        assert_eq!(token_bytes(&pieces, &types), [vec![b'\n'], b" the".to_vec(), vec![], vec![]]);
    }
}
