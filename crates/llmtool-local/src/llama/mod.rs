//! The llama-architecture transformer, and the families built on its block (Qwen2, Qwen3),
//! run on the CPU: weights in quantized blocks, the matrix products split by rows across the
//! rayon threads, a growing key/value cache.
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

use self::attention::{KvCache, Rope, RopeLayout, attend};
use self::blocks::{Activations, Quantized};
use self::matrix::{Matrix, Tensors};
use crate::LocalError;
use crate::model::FileBytes;

/// The transformer families this forward pass runs: llama's block, with what each family
/// changes in it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Architecture {
    #[default]
    Llama,
    /// Qwen2 (and Qwen2.5): biases on the query, key and value projections, and the rotary
    /// embedding in GPT-NeoX's layout (GGUF keeps its weights unpermuted).
    Qwen2,
    /// Qwen3: no biases, but each head's query and key RMS-normalised before the rotary
    /// embedding (GPT-NeoX's layout, as `Halves`), and heads that may be wider than the
    /// model's width over its heads.
    Qwen3,
}

impl Architecture {
    /// The family `general.architecture` names, if this engine runs it.
    pub(crate) fn named(name: &str) -> Option<Architecture> {
        match name {
            "llama" => Some(Architecture::Llama),
            "qwen2" => Some(Architecture::Qwen2),
            "qwen3" => Some(Architecture::Qwen3),
            _ => None,
        }
    }

    /// The families this engine runs, for messages.
    pub(crate) const NAMES: &'static str = "llama, qwen2, qwen3";

    /// The prefix of its keys in the GGUF metadata (`qwen2.embedding_length`).
    fn prefix(self) -> &'static str {
        match self {
            Architecture::Llama => "llama",
            Architecture::Qwen2 => "qwen2",
            Architecture::Qwen3 => "qwen3",
        }
    }

    fn rope_layout(self) -> RopeLayout {
        match self {
            Architecture::Llama => RopeLayout::Interleaved,
            Architecture::Qwen2 | Architecture::Qwen3 => RopeLayout::Halves,
        }
    }
}

/// The model's dimensions, from the GGUF metadata.
#[derive(Debug, Clone, Default)]
pub(crate) struct Config {
    pub architecture: Architecture,
    pub dim: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub layers: usize,
    pub rms_epsilon: f32,
    pub context_length: usize,
}

impl Config {
    /// The width of a token's queries: every head's (the model's width, but for Qwen3).
    pub(crate) fn q_dim(&self) -> usize {
        self.heads * self.head_dim
    }

    /// The width of a token's keys, and of its values.
    pub(crate) fn kv_dim(&self) -> usize {
        self.kv_heads * self.head_dim
    }
}

#[derive(Debug, Clone)]
struct Layer {
    attention_norm: Vec<f32>,
    /// The query, key and value projections stacked: one pass over the input.
    qkv: Matrix,
    /// Their biases, stacked the same way, for a family that has them.
    qkv_bias: Option<Vec<f32>>,
    /// Weights of the RMS norm over each head's query and key (Qwen3's), one head wide.
    qk_norms: Option<(Vec<f32>, Vec<f32>)>,
    attention_output: Matrix,
    ffn_norm: Vec<f32>,
    /// The gate and up projections stacked.
    gate_up: Matrix,
    down: Matrix,
}

/// A loaded model. The keys and values of a sequence are in its own [`Cache`], so that one
/// pass can run several sequences.
#[derive(Debug, Clone)]
pub(crate) struct Llama {
    config: Config,
    embedding: Matrix,
    layers: Vec<Layer>,
    output_norm: Vec<f32>,
    /// `None`: the output projection is the embedding matrix (tied weights).
    output: Option<Matrix>,
    rope: Rope,
    /// The threads a forward pass runs on (`RAYON_NUM_THREADS`, or one per core). The pass
    /// runs inside the pool, so that each of its parallel steps starts on a worker rather than
    /// waking the pool from outside and sleeping until it is done.
    threads: std::sync::Arc<rayon::ThreadPool>,
}

impl Llama {
    pub(crate) fn load(content: &Content, file: &FileBytes) -> Result<Self, LocalError> {
        let tensors = Tensors { content, file };
        let config = config(content)?;
        let (dim, q_dim, kv_dim) = (config.dim, config.q_dim(), config.kv_dim());
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
                let bias = |name: &str, len: usize| {
                    let name = format!("blk.{i}.{name}.bias");
                    if tensors.has(&name) { vector(&tensors, &name, len).map(Some) } else { Ok(None) }
                };
                let qkv_bias = match (
                    bias("attn_q", q_dim)?,
                    bias("attn_k", kv_dim)?,
                    bias("attn_v", kv_dim)?,
                ) {
                    (Some(q), Some(k), Some(v)) => Some([q, k, v].concat()),
                    (None, None, None) => None,
                    _ => {
                        return Err(LocalError::Model(format!(
                            "layer {i} has biases on some of its query, key and value projections but not all"
                        )));
                    }
                };
                let norm = |name: &str| {
                    let name = format!("blk.{i}.{name}.weight");
                    if tensors.has(&name) {
                        vector(&tensors, &name, config.head_dim).map(Some)
                    } else {
                        Ok(None)
                    }
                };
                let qk_norms = match (norm("attn_q_norm")?, norm("attn_k_norm")?) {
                    (Some(q), Some(k)) => Some((q, k)),
                    (None, None) => None,
                    _ => {
                        return Err(LocalError::Model(format!(
                            "layer {i} normalises its queries or its keys, not both"
                        )));
                    }
                };
                Ok(Layer {
                    qk_norms,
                    attention_norm: vector(&tensors, &format!("blk.{i}.attn_norm.weight"), dim)?,
                    qkv: Matrix::stack(vec![
                        matrix("attn_q", q_dim, dim)?,
                        matrix("attn_k", kv_dim, dim)?,
                        matrix("attn_v", kv_dim, dim)?,
                    ]),
                    qkv_bias,
                    attention_output: matrix("attn_output", dim, q_dim)?,
                    ffn_norm: vector(&tensors, &format!("blk.{i}.ffn_norm.weight"), dim)?,
                    gate_up: Matrix::stack(vec![matrix("ffn_gate", hidden, dim)?, up]),
                    down: matrix("ffn_down", dim, hidden)?,
                })
            })
            .collect::<Result<Vec<_>, LocalError>>()?;
        let key = |name: &str| format!("{}.{name}", config.architecture.prefix());
        let rope_dims = number(content, &key("rope.dimension_count")).unwrap_or(config.head_dim);
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
        let base = float(content, &key("rope.freq_base")).unwrap_or(10_000.0);
        let threads = rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("llmtool-local-{i}"))
            .build()
            .map_err(|e| LocalError::Model(format!("cannot start the model's threads: {e}")))?;
        Ok(Self {
            threads: std::sync::Arc::new(threads),
            rope: Rope::new(rope_dims, base, factors.as_deref(), config.architecture.rope_layout()),
            output_norm: vector(&tensors, "output_norm.weight", dim)?,
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

    /// An empty key/value cache for one sequence.
    pub(crate) fn cache(&self) -> Cache {
        Cache { layers: vec![KvCache::default(); self.config.layers] }
    }

    /// A copy of the first `positions` positions of `cache`.
    pub(crate) fn cache_prefix(&self, cache: &Cache, positions: usize) -> Cache {
        let values = positions * self.config.kv_heads * self.config.head_dim;
        let layers = cache
            .layers
            .iter()
            .map(|layer| KvCache {
                keys: layer.keys[..values.min(layer.keys.len())].to_vec(),
                values: layer.values[..values.min(layer.values.len())].to_vec(),
            })
            .collect();
        Cache { layers }
    }

    /// Runs every segment's tokens in one pass (each at its positions, against its own
    /// cache, which keeps positions before a segment's start and forgets later ones) and
    /// returns the logits after each segment's last token. The weights are read once for all
    /// the segments' tokens: several sequences decode together for little more than one.
    pub(crate) fn forward(
        &self,
        segments: &mut [Segment<'_>],
    ) -> Result<Vec<Vec<f32>>, LocalError> {
        let threads = std::sync::Arc::clone(&self.threads);
        threads.install(|| self.forward_here(segments))
    }

    fn forward_here(&self, segments: &mut [Segment<'_>]) -> Result<Vec<Vec<f32>>, LocalError> {
        let config = &self.config;
        let (dim, q_dim, kv_dim, head_dim) =
            (config.dim, config.q_dim(), config.kv_dim(), config.head_dim);
        for segment in segments.iter() {
            let (count, position) = (segment.tokens.len(), segment.position);
            let cached = segment.cache.layers.first().map_or(0, |c| c.keys.len() / kv_dim);
            if count == 0 || position > cached || position + count > config.context_length {
                return Err(LocalError::Model(format!(
                    "cannot run {count} tokens at position {position} ({cached} cached, context {})",
                    config.context_length
                )));
            }
        }
        let count: usize = segments.iter().map(|s| s.tokens.len()).sum();
        if count == 0 {
            return Ok(Vec::new());
        }
        let mut residual = vec![0.0; count * dim];
        let tokens = segments.iter().flat_map(|s| s.tokens.iter());
        for (token, row) in tokens.zip(residual.chunks_exact_mut(dim)) {
            let token = *token as usize;
            if token >= self.embedding.rows {
                return Err(LocalError::Model(format!("token {token} is not in the vocabulary")));
            }
            self.embedding.row(token, row);
        }
        let angles: Vec<_> = segments
            .iter()
            .flat_map(|s| (s.position..s.position + s.tokens.len()).map(|p| self.rope.angles(p)))
            .collect();
        let mut normed = vec![0.0; count * dim];
        let mut quantized = Activations::default();
        let mut queries = vec![0.0; count * q_dim];
        let mut attention = vec![0.0; count * q_dim];
        // Products, reused from layer to layer.
        let (mut qkv, mut gate_up, mut products) = (Vec::new(), Vec::new(), Vec::new());
        for (index, layer) in self.layers.iter().enumerate() {
            rms_norm(&residual, &layer.attention_norm, config.rms_epsilon, &mut normed);
            quantized.quantize(&normed, dim);
            multiply(&layer.qkv, quantized.all(), &mut qkv);
            if let Some(bias) = &layer.qkv_bias {
                qkv.chunks_exact_mut(q_dim + 2 * kv_dim).for_each(|row| add(row, bias));
            }
            for ((qkv, query), angles) in qkv
                .chunks_exact_mut(q_dim + 2 * kv_dim)
                .zip(queries.chunks_exact_mut(q_dim))
                .zip(&angles)
            {
                let (new_query, key_value) = qkv.split_at_mut(q_dim);
                let (key, _) = key_value.split_at_mut(kv_dim);
                if let Some((query_norm, key_norm)) = &layer.qk_norms {
                    head_norms(new_query, query_norm, config.rms_epsilon);
                    head_norms(key, key_norm, config.rms_epsilon);
                }
                self.rope.rotate(angles, new_query, head_dim);
                self.rope.rotate(angles, key, head_dim);
                query.copy_from_slice(new_query);
            }
            // Each segment's keys and values into its cache, then its attention over them.
            let mut first = 0;
            for segment in segments.iter_mut() {
                let (position, length) = (segment.position, segment.tokens.len());
                let cache = &mut segment.cache.layers[index];
                cache.keys.truncate(position * kv_dim);
                cache.values.truncate(position * kv_dim);
                for row in qkv[first * (q_dim + 2 * kv_dim)..]
                    .chunks_exact(q_dim + 2 * kv_dim)
                    .take(length)
                {
                    cache.keys.extend_from_slice(&row[q_dim..q_dim + kv_dim]);
                    cache.values.extend_from_slice(&row[q_dim + kv_dim..]);
                }
                let rows = first * q_dim..(first + length) * q_dim;
                attend(config, &queries[rows.clone()], cache, position, &mut attention[rows]);
                first += length;
            }
            quantized.quantize(&attention, q_dim);
            multiply(&layer.attention_output, quantized.all(), &mut products);
            add(&mut residual, &products);

            rms_norm(&residual, &layer.ffn_norm, config.rms_epsilon, &mut normed);
            quantized.quantize(&normed, dim);
            multiply(&layer.gate_up, quantized.all(), &mut gate_up);
            let hidden = layer.gate_up.rows / 2;
            let activated: Vec<f32> = gate_up
                .chunks_exact(2 * hidden)
                .flat_map(|row| {
                    let (gate, up) = row.split_at(hidden);
                    gate.iter().zip(up).map(|(g, u)| g / (1.0 + (-g).exp()) * u)
                })
                .collect();
            quantized.quantize(&activated, hidden);
            multiply(&layer.down, quantized.all(), &mut products);
            add(&mut residual, &products);
        }
        // The last token of each segment, through the output projection together.
        let mut last_rows = Vec::with_capacity(segments.len() * dim);
        let mut end = 0;
        for segment in segments.iter() {
            end += segment.tokens.len();
            last_rows.extend_from_slice(&residual[(end - 1) * dim..end * dim]);
        }
        let mut normed_last = vec![0.0; last_rows.len()];
        rms_norm(&last_rows, &self.output_norm, config.rms_epsilon, &mut normed_last);
        quantized.quantize(&normed_last, dim);
        let output = self.output.as_ref().unwrap_or(&self.embedding);
        multiply(output, quantized.all(), &mut products);
        Ok(products.chunks_exact(output.rows).map(<[f32]>::to_vec).collect())
    }
}

/// The keys and values of one sequence, layer by layer.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cache {
    layers: Vec<KvCache>,
}

/// Tokens of one sequence to run, from `position` on, against its cache.
#[derive(Debug)]
pub(crate) struct Segment<'a> {
    pub cache: &'a mut Cache,
    pub tokens: &'a [u32],
    pub position: usize,
}

/// The products of `weights` with `count` activation vectors, into `out` (`count` × rows,
/// token-major). The rows are split across the rayon threads, and each thread takes its rows
/// for every vector, 16 vectors at a time: each weight row is read from memory once for all the
/// vectors (the tokens of a prompt, or the next token of every answer decoded together), and
/// the 16 vectors stay in the cache while it is used.
fn multiply(weights: &Matrix, xs: Quantized<'_>, out: &mut Vec<f32>) {
    let (rows, count) = (weights.rows, xs.tokens());
    let threads = rayon::current_num_threads();
    let chunk = rows.div_ceil(threads * 4).max(16);
    out.clear();
    out.resize(rows * count, 0.0);
    if count == 1 {
        out.par_chunks_mut(chunk).enumerate().for_each(|(i, out)| {
            kernels::multiply(weights, i * chunk..i * chunk + out.len(), xs, out);
        });
        return;
    }
    let pieces: Vec<Vec<f32>> = (0..rows.div_ceil(chunk))
        .into_par_iter()
        .map(|piece| {
            let range = piece * chunk..((piece + 1) * chunk).min(rows);
            let mut products = vec![0.0; range.len() * count];
            for (run, products) in products.chunks_mut(RUN * range.len()).enumerate() {
                let tokens = run * RUN..(run * RUN + RUN).min(count);
                kernels::multiply(weights, range.clone(), xs.run(tokens), products);
            }
            products
        })
        .collect();
    // Each piece is token-major over its own rows: put its rows in place for every token.
    for (piece, products) in pieces.iter().enumerate() {
        let start = piece * chunk;
        let width = products.len() / count;
        for (token, products) in products.chunks_exact(width).enumerate() {
            out[token * rows + start..][..width].copy_from_slice(products);
        }
    }
}

/// How many activation vectors go through a weight row together.
const RUN: usize = 16;

/// Root-mean-square normalization of each `weight.len()` values of `x`, scaled by `weight`.
/// Each head of `x` (one `weight` wide) RMS-normalised in place.
fn head_norms(x: &mut [f32], weight: &[f32], epsilon: f32) {
    let mut normed = vec![0.0; weight.len()];
    for head in x.chunks_exact_mut(weight.len()) {
        rms_norm(head, weight, epsilon, &mut normed);
        head.copy_from_slice(&normed);
    }
}

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
    let name = crate::tokenizer::string(content, "general.architecture").unwrap_or_default();
    let architecture = Architecture::named(&name).ok_or_else(|| {
        LocalError::Model(format!(
            "architecture `{name}` is not supported; these are: {}",
            Architecture::NAMES
        ))
    })?;
    let key = |name: &str| format!("{}.{name}", architecture.prefix());
    let required = |name: &str| {
        let key = key(name);
        number(content, &key)
            .filter(|n| *n > 0)
            .ok_or_else(|| LocalError::Model(format!("the GGUF file has no `{key}`")))
    };
    if number(content, &key("expert_count")).unwrap_or(0) > 1 {
        return Err(LocalError::Model("mixture-of-experts models are not supported".into()));
    }
    let dim = required("embedding_length")?;
    let heads = required("attention.head_count")?;
    let kv_heads = number(content, &key("attention.head_count_kv")).unwrap_or(heads);
    // A head is the model's width over its heads, unless the file says otherwise (Qwen3).
    let head_dim = number(content, &key("attention.key_length")).unwrap_or(dim / heads.max(1));
    let value_dim = number(content, &key("attention.value_length")).unwrap_or(head_dim);
    if head_dim == 0
        || value_dim != head_dim
        || kv_heads == 0
        || heads % kv_heads != 0
        || dim % 32 != 0
        || !(heads * head_dim).is_multiple_of(32)
    {
        return Err(LocalError::Model(format!(
            "unsupported attention shape: width {dim}, {heads} heads of {head_dim}, {kv_heads} key/value heads"
        )));
    }
    Ok(Config {
        architecture,
        dim,
        heads,
        kv_heads,
        head_dim,
        layers: required("block_count")?,
        rms_epsilon: float(content, &key("attention.layer_norm_rms_epsilon")).unwrap_or(1e-5),
        context_length: number(content, &key("context_length")).unwrap_or(2048),
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
