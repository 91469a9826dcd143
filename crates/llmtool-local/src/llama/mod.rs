//! The llama-architecture transformer, run on the CPU: weights in quantized blocks, the
//! matrix products split by rows across the rayon threads, a growing key/value cache.
//!
//! Our own forward pass rather than candle-transformers' `quantized_llama`: that one builds a
//! tensor graph per token (about twenty tensor operations per layer, a cache that is copied to
//! grow) and ran this 135M-parameter model at a third of llama.cpp's decoding speed, where
//! this loop and the kernels in `kernels.rs` keep up with it. candle still reads the GGUF
//! file and dequantizes the formats the kernels do not take.

mod attention;
mod blocks;
mod kernels;
mod matrix;

use candle_core::quantized::gguf_file::{Content, Value};
use rayon::prelude::*;

use self::attention::{KvCache, Rope, attend};
use self::blocks::{BlockQ8, quantize_activations};
use self::matrix::{Matrix, Tensors};
use crate::LocalError;

/// The model's dimensions, from the GGUF metadata.
#[derive(Debug, Clone, Default)]
pub(crate) struct Config {
    pub dim: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub layers: usize,
    pub rms_epsilon: f32,
    pub context_length: usize,
}

#[derive(Debug, Clone)]
struct Layer {
    attention_norm: Vec<f32>,
    /// The query, key and value projections stacked: one pass over the input.
    qkv: Matrix,
    attention_output: Matrix,
    ffn_norm: Vec<f32>,
    /// The gate and up projections stacked.
    gate_up: Matrix,
    down: Matrix,
}

/// A loaded model and its key/value cache.
#[derive(Debug, Clone)]
pub(crate) struct Llama {
    config: Config,
    embedding: Matrix,
    layers: Vec<Layer>,
    output_norm: Vec<f32>,
    /// `None`: the output projection is the embedding matrix (tied weights).
    output: Option<Matrix>,
    rope: Rope,
    cache: Vec<KvCache>,
    /// The threads a forward pass runs on (`RAYON_NUM_THREADS`, or one per core). The pass
    /// runs inside the pool, so that each of its parallel steps starts on a worker rather than
    /// waking the pool from outside and sleeping until it is done.
    threads: std::sync::Arc<rayon::ThreadPool>,
}

impl Llama {
    pub(crate) fn load(content: &Content, bytes: &[u8]) -> Result<Self, LocalError> {
        let tensors = Tensors { content, bytes };
        let config = config(content)?;
        let (dim, kv_dim) = (config.dim, config.kv_heads * config.head_dim);
        let embedding = tensors.matrix("token_embd.weight")?;
        expect_cols(&embedding, dim, "token_embd.weight")?;
        let output = if tensors.has("output.weight") {
            let output = tensors.matrix("output.weight")?;
            expect_cols(&output, dim, "output.weight")?;
            Some(output)
        } else {
            None
        };
        let layers = (0..config.layers)
            .map(|i| {
                let matrix = |name: &str, rows: usize, cols: usize| {
                    let name = format!("blk.{i}.{name}.weight");
                    let matrix = tensors.matrix(&name)?;
                    expect_cols(&matrix, cols, &name)?;
                    if matrix.rows == rows {
                        Ok(matrix)
                    } else {
                        Err(shape_error(&name, &matrix, rows, cols))
                    }
                };
                let up = tensors.matrix(&format!("blk.{i}.ffn_up.weight"))?;
                let hidden = up.rows;
                expect_cols(&up, dim, "ffn_up")?;
                Ok(Layer {
                    attention_norm: vector(&tensors, &format!("blk.{i}.attn_norm.weight"), dim)?,
                    qkv: Matrix::stack(vec![
                        matrix("attn_q", dim, dim)?,
                        matrix("attn_k", kv_dim, dim)?,
                        matrix("attn_v", kv_dim, dim)?,
                    ]),
                    attention_output: matrix("attn_output", dim, dim)?,
                    ffn_norm: vector(&tensors, &format!("blk.{i}.ffn_norm.weight"), dim)?,
                    gate_up: Matrix::stack(vec![matrix("ffn_gate", hidden, dim)?, up]),
                    down: matrix("ffn_down", dim, hidden)?,
                })
            })
            .collect::<Result<Vec<_>, LocalError>>()?;
        let rope_dims = number(content, "llama.rope.dimension_count").unwrap_or(config.head_dim);
        if rope_dims > config.head_dim || rope_dims % 2 == 1 {
            return Err(LocalError::Model(format!(
                "a rotary embedding over {rope_dims} of {} values per head is not supported",
                config.head_dim
            )));
        }
        let factors = if tensors.has("rope_freqs.weight") {
            Some(tensors.values("rope_freqs.weight")?)
        } else {
            None
        };
        let base = float(content, "llama.rope.freq_base").unwrap_or(10_000.0);
        let threads = rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("llmtool-local-{i}"))
            .build()
            .map_err(|e| LocalError::Model(format!("cannot start the model's threads: {e}")))?;
        Ok(Self {
            threads: std::sync::Arc::new(threads),
            rope: Rope::new(rope_dims, base, factors.as_deref()),
            output_norm: vector(&tensors, "output_norm.weight", dim)?,
            cache: vec![KvCache::default(); config.layers],
            config,
            embedding,
            layers,
            output,
        })
    }

    pub(crate) fn context_length(&self) -> usize {
        self.config.context_length
    }

    /// How many logits `forward` returns.
    pub(crate) fn vocab_size(&self) -> usize {
        self.output.as_ref().unwrap_or(&self.embedding).rows
    }

    /// Runs `tokens`, at positions from `position` on (the cache keeps positions before it
    /// and forgets later ones), and returns the logits after the last token.
    pub(crate) fn forward(
        &mut self,
        tokens: &[u32],
        position: usize,
    ) -> Result<Vec<f32>, LocalError> {
        let threads = std::sync::Arc::clone(&self.threads);
        threads.install(|| self.forward_here(tokens, position))
    }

    fn forward_here(&mut self, tokens: &[u32], position: usize) -> Result<Vec<f32>, LocalError> {
        let config = &self.config;
        let (count, dim) = (tokens.len(), config.dim);
        let (kv_dim, head_dim) = (config.kv_heads * config.head_dim, config.head_dim);
        let cached = self.cache[0].keys.len() / kv_dim;
        if count == 0 || position > cached || position + count > config.context_length {
            return Err(LocalError::Model(format!(
                "cannot run {count} tokens at position {position} ({cached} cached, context {})",
                config.context_length
            )));
        }
        let mut residual = vec![0.0; count * dim];
        for (token, row) in tokens.iter().zip(residual.chunks_exact_mut(dim)) {
            let token = *token as usize;
            if token >= self.embedding.rows {
                return Err(LocalError::Model(format!("token {token} is not in the vocabulary")));
            }
            self.embedding.row(token, row);
        }
        let angles: Vec<_> = (position..position + count).map(|p| self.rope.angles(p)).collect();
        let mut normed = vec![0.0; count * dim];
        let mut quantized = Vec::new();
        let mut queries = vec![0.0; count * dim];
        let mut attention = vec![0.0; count * dim];
        // Products, reused from layer to layer.
        let (mut qkv, mut gate_up, mut products) = (Vec::new(), Vec::new(), Vec::new());
        for (layer, cache) in self.layers.iter().zip(&mut self.cache) {
            cache.keys.truncate(position * kv_dim);
            cache.values.truncate(position * kv_dim);
            rms_norm(&residual, &layer.attention_norm, config.rms_epsilon, &mut normed);
            quantize_activations(&normed, &mut quantized);
            multiply(&layer.qkv, &quantized, count, &mut qkv);
            for ((qkv, query), angles) in qkv
                .chunks_exact_mut(dim + 2 * kv_dim)
                .zip(queries.chunks_exact_mut(dim))
                .zip(&angles)
            {
                let (new_query, key_value) = qkv.split_at_mut(dim);
                let (key, value) = key_value.split_at_mut(kv_dim);
                Rope::rotate(angles, new_query, head_dim);
                Rope::rotate(angles, key, head_dim);
                query.copy_from_slice(new_query);
                cache.keys.extend_from_slice(key);
                cache.values.extend_from_slice(value);
            }
            attend(config, &queries, cache, position, &mut attention);
            quantize_activations(&attention, &mut quantized);
            multiply(&layer.attention_output, &quantized, count, &mut products);
            add(&mut residual, &products);

            rms_norm(&residual, &layer.ffn_norm, config.rms_epsilon, &mut normed);
            quantize_activations(&normed, &mut quantized);
            multiply(&layer.gate_up, &quantized, count, &mut gate_up);
            let hidden = layer.gate_up.rows / 2;
            let activated: Vec<f32> = gate_up
                .chunks_exact(2 * hidden)
                .flat_map(|row| {
                    let (gate, up) = row.split_at(hidden);
                    gate.iter().zip(up).map(|(g, u)| g / (1.0 + (-g).exp()) * u)
                })
                .collect();
            quantize_activations(&activated, &mut quantized);
            multiply(&layer.down, &quantized, count, &mut products);
            add(&mut residual, &products);
        }
        let last = &residual[(count - 1) * dim..];
        let mut normed_last = vec![0.0; dim];
        rms_norm(last, &self.output_norm, config.rms_epsilon, &mut normed_last);
        quantize_activations(&normed_last, &mut quantized);
        multiply(self.output.as_ref().unwrap_or(&self.embedding), &quantized, 1, &mut products);
        Ok(products)
    }
}

/// The products of `weights` with `count` activation vectors, into `out` (`count` × rows,
/// token-major). One vector (decoding): the rows are split across the rayon threads. Several
/// (a prompt): the vectors are, in runs of up to 16, so that each weight row, read once from
/// the cache, is used for the whole run.
fn multiply(weights: &Matrix, xs: &[BlockQ8], count: usize, out: &mut Vec<f32>) {
    let rows = weights.rows;
    let threads = rayon::current_num_threads();
    out.clear();
    out.resize(rows * count, 0.0);
    if count == 1 {
        let chunk = rows.div_ceil(threads * 4).max(16);
        out.par_chunks_mut(chunk).enumerate().for_each(|(i, out)| {
            kernels::multiply(weights, i * chunk..i * chunk + out.len(), xs, out);
        });
    } else {
        let run = count.div_ceil(threads).min(16);
        let per_row = weights.blocks_per_row();
        out.par_chunks_mut(run * rows)
            .zip(xs.par_chunks(run * per_row))
            .for_each(|(out, xs)| kernels::multiply(weights, 0..rows, xs, out));
    }
}

/// Root-mean-square normalization of each `weight.len()` values of `x`, scaled by `weight`.
fn rms_norm(x: &[f32], weight: &[f32], epsilon: f32, out: &mut [f32]) {
    for (x, out) in x.chunks_exact(weight.len()).zip(out.chunks_exact_mut(weight.len())) {
        let mean_square = x.iter().map(|v| v * v).sum::<f32>() / x.len() as f32;
        let scale = 1.0 / (mean_square + epsilon).sqrt();
        for ((o, v), w) in out.iter_mut().zip(x).zip(weight) {
            *o = v * scale * w;
        }
    }
}

fn add(x: &mut [f32], delta: &[f32]) {
    for (x, d) in x.iter_mut().zip(delta) {
        *x += d;
    }
}

fn config(content: &Content) -> Result<Config, LocalError> {
    let required = |key: &str| {
        number(content, key)
            .filter(|n| *n > 0)
            .ok_or_else(|| LocalError::Model(format!("the GGUF file has no `{key}`")))
    };
    if number(content, "llama.expert_count").unwrap_or(0) > 1 {
        return Err(LocalError::Model("mixture-of-experts models are not supported".into()));
    }
    let dim = required("llama.embedding_length")?;
    let heads = required("llama.attention.head_count")?;
    let kv_heads = number(content, "llama.attention.head_count_kv").unwrap_or(heads);
    if dim % heads != 0 || kv_heads == 0 || heads % kv_heads != 0 || dim % 32 != 0 {
        return Err(LocalError::Model(format!(
            "unsupported attention shape: width {dim}, {heads} heads, {kv_heads} key/value heads"
        )));
    }
    Ok(Config {
        dim,
        heads,
        kv_heads,
        head_dim: dim / heads,
        layers: required("llama.block_count")?,
        rms_epsilon: float(content, "llama.attention.layer_norm_rms_epsilon").unwrap_or(1e-5),
        context_length: number(content, "llama.context_length").unwrap_or(2048),
    })
}

fn number(content: &Content, key: &str) -> Option<usize> {
    crate::tokenizer::number(content, key).map(|n| n as usize)
}

fn float(content: &Content, key: &str) -> Option<f32> {
    match content.metadata.get(key)? {
        Value::F32(v) => Some(*v),
        Value::F64(v) => Some(*v as f32),
        _ => None,
    }
}

fn vector(tensors: &Tensors<'_>, name: &str, len: usize) -> Result<Vec<f32>, LocalError> {
    let values = tensors.values(name)?;
    if values.len() == len {
        Ok(values)
    } else {
        Err(LocalError::Model(format!("tensor `{name}` has {} values, not {len}", values.len())))
    }
}

fn expect_cols(matrix: &Matrix, cols: usize, name: &str) -> Result<(), LocalError> {
    if matrix.cols == cols { Ok(()) } else { Err(shape_error(name, matrix, matrix.rows, cols)) }
}

fn shape_error(name: &str, matrix: &Matrix, rows: usize, cols: usize) -> LocalError {
    LocalError::Model(format!(
        "tensor `{name}` is {} × {}, not {rows} × {cols}",
        matrix.rows, matrix.cols
    ))
}

/// The message of a candle error, without the backtrace candle appends when
/// `RUST_BACKTRACE` is set.
pub(crate) fn message(error: &candle_core::Error) -> String {
    error.to_string().lines().next().unwrap_or_default().trim().to_owned()
}
