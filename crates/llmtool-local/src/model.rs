//! Loading a GGUF model for the CPU: its weights (Q4_1-style tensors requantized to Q8_0 so that
//! candle's SIMD kernels run them), tokenizer and chat template.

use std::io::Cursor;
use std::path::Path;
use std::time::{Duration, Instant};

use candle_core::quantized::{GgmlDType, QTensor, gguf_file};
use candle_core::{Device, Tensor};
use candle_transformers::models::quantized_llama::ModelWeights;
use tokenizers::Tokenizer;

use crate::LocalError;
use crate::chat::ChatTemplate;
use crate::tokenizer::{self, number, string};

/// Types candle runs without SIMD kernels on the CPU; requantized to Q8_0 at load.
const SLOW_ON_CPU: [GgmlDType; 3] = [GgmlDType::Q4_1, GgmlDType::Q5_0, GgmlDType::Q5_1];

/// A model ready to generate.
pub struct LocalModel {
    pub(crate) weights: ModelWeights,
    pub(crate) tokenizer: Tokenizer,
    /// The bytes of each token, for constrained decoding.
    pub(crate) vocab_bytes: Vec<Vec<u8>>,
    pub(crate) chat: ChatTemplate,
    pub(crate) eos_tokens: Vec<u32>,
    pub(crate) vocab_size: usize,
    pub(crate) context_length: usize,
    pub load_time: Duration,
    pub name: String,
}

impl std::fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModel")
            .field("name", &self.name)
            .field("vocab_size", &self.vocab_size)
            .finish_non_exhaustive()
    }
}

impl LocalModel {
    /// Loads a llama-architecture GGUF file.
    pub fn load(path: &Path, requantize: bool) -> Result<Self, LocalError> {
        let started = Instant::now();
        let bytes = std::fs::read(path)
            .map_err(|e| LocalError::Io(format!("cannot read `{}`: {e}", path.display())))?;
        let mut reader = Cursor::new(bytes);
        let content = gguf_file::Content::read(&mut reader).map_err(|e| {
            LocalError::Model(format!("`{}` is not a GGUF file: {}", path.display(), message(&e)))
        })?;
        let architecture = string(&content, "general.architecture").unwrap_or_default();
        if architecture != "llama" {
            return Err(LocalError::Model(format!(
                "architecture `{architecture}` is not supported; llama-architecture GGUF models are"
            )));
        }
        let tokenizer = tokenizer::from_gguf(&content)?;
        let tokens: Vec<String> = (0..tokenizer.get_vocab_size(true) as u32)
            .map(|id| tokenizer.id_to_token(id).unwrap_or_default())
            .collect();
        let token_text = |key: &str| {
            number(&content, key)
                .and_then(|id| tokens.get(id as usize).cloned())
                .unwrap_or_default()
        };
        let chat = ChatTemplate::new(
            string(&content, "tokenizer.chat_template"),
            token_text("tokenizer.ggml.bos_token_id"),
            token_text("tokenizer.ggml.eos_token_id"),
        )?;
        let mut eos_tokens: Vec<u32> =
            number(&content, "tokenizer.ggml.eos_token_id").into_iter().collect();
        for end in ["<|im_end|>", "<|endoftext|>", "<|eot_id|>", "</s>"] {
            if let Some(id) = tokenizer.token_to_id(end)
                && !eos_tokens.contains(&id)
            {
                eos_tokens.push(id);
            }
        }
        let context_length = number(&content, "llama.context_length").unwrap_or(2048) as usize;
        let name = string(&content, "general.name").unwrap_or_else(|| {
            path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
        });
        let device = Device::Cpu;
        let slow = content.tensor_infos.values().any(|t| SLOW_ON_CPU.contains(&t.ggml_dtype));
        let weights = if requantize && slow {
            let fast = requantized(&content, &mut reader, &device)?;
            let mut cursor = Cursor::new(fast);
            let fast_content = gguf_file::Content::read(&mut cursor)
                .map_err(|e| LocalError::Model(e.to_string()))?;
            ModelWeights::from_gguf(fast_content, &mut cursor, &device)
        } else {
            ModelWeights::from_gguf(content, &mut reader, &device)
        }
        .map_err(|e| LocalError::Model(format!("cannot load the weights: {}", message(&e))))?;
        Ok(Self {
            weights,
            vocab_size: tokenizer.get_vocab_size(true),
            vocab_bytes: tokenizer::token_bytes(&tokenizer),
            tokenizer,
            chat,
            eos_tokens,
            context_length,
            load_time: started.elapsed(),
            name,
        })
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// The bytes each token stands for.
    pub fn vocab(&self) -> &[Vec<u8>] {
        &self.vocab_bytes
    }

    /// Runs the model on `tokens` starting at `position` and returns the last position's logits.
    pub(crate) fn forward(
        &mut self,
        tokens: &[u32],
        position: usize,
    ) -> Result<Vec<f32>, LocalError> {
        let input =
            Tensor::new(tokens, &Device::Cpu).and_then(|t| t.unsqueeze(0)).map_err(model_error)?;
        let logits = self.weights.forward(&input, position).map_err(model_error)?;
        logits
            .squeeze(0)
            .and_then(|l| l.to_dtype(candle_core::DType::F32))
            .and_then(|l| l.to_vec1())
            .map_err(model_error)
    }
}

#[allow(clippy::needless_pass_by_value, reason = "used as `map_err(model_error)`")]
fn model_error(error: candle_core::Error) -> LocalError {
    LocalError::Model(message(&error))
}

/// The message of a candle error, without the backtrace candle appends when
/// `RUST_BACKTRACE` is set.
fn message(error: &candle_core::Error) -> String {
    error.to_string().lines().next().unwrap_or_default().trim().to_owned()
}

/// A GGUF image of `content` with the tensors candle runs slowly requantized to Q8_0.
fn requantized(
    content: &gguf_file::Content,
    reader: &mut Cursor<Vec<u8>>,
    device: &Device,
) -> Result<Vec<u8>, LocalError> {
    let mut tensors: Vec<(String, QTensor)> = Vec::with_capacity(content.tensor_infos.len());
    for (name, info) in &content.tensor_infos {
        let tensor = content.tensor(reader, name, device).map_err(model_error)?;
        let tensor = if SLOW_ON_CPU.contains(&info.ggml_dtype) {
            let values = tensor.dequantize(device).map_err(model_error)?;
            QTensor::quantize(&values, GgmlDType::Q8_0).map_err(model_error)?
        } else {
            tensor
        };
        tensors.push((name.clone(), tensor));
    }
    let metadata: Vec<(&str, &gguf_file::Value)> =
        content.metadata.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let tensor_refs: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let mut out = Cursor::new(Vec::new());
    gguf_file::write(&mut out, &metadata, &tensor_refs).map_err(model_error)?;
    Ok(out.into_inner())
}
