//! The llama-architecture transformer, and the families built on its block (Qwen2, Qwen3,
//! Gemma 2 and 3, Phi-3), run on the CPU: weights in quantized blocks, the matrix products split by rows across the
//! rayon threads, a growing key/value cache.
//!
//! Our own forward pass rather than candle-transformers' `quantized_llama`: that one builds a
//! tensor graph per token (about twenty tensor operations per layer, a cache that is copied to
//! grow) and ran this 135M-parameter model at a third of llama.cpp's decoding speed, where
//! this loop and the kernels in `kernels.rs` keep up with it. The file is read by `crate::gguf`,
//! and the formats the kernels do not take are dequantized by `dequantize.rs`.

mod attention;
mod attention_kernels;
mod blocks;
mod config;
mod dequantize;
mod kernels;
mod math;
mod matrix;
mod repack;

use crate::gguf::Content;
use rayon::prelude::*;

use self::attention::{Attending, KvCache, Rope, attend};
use self::blocks::{Activations, Quantized};
pub(crate) use self::config::Architecture;
use self::config::Config;
use self::matrix::{Matrix, Tensors};
use crate::LocalError;
use crate::model::FileBytes;

#[derive(Debug, Clone)]
struct Layer {
    attention_norm: Vec<f32>,
    /// The query, key and value projections stacked (or fused in the file, Phi-3's): one pass
    /// over the input.
    qkv: Matrix,
    /// Their biases, stacked the same way, for a family that has them.
    qkv_bias: Option<Vec<f32>>,
    /// Weights of the RMS norm over each head's query and key (Qwen3's), one head wide.
    qk_norms: Option<(Vec<f32>, Vec<f32>)>,
    attention_output: Matrix,
    /// Gemma's RMS norm of the attention's output, before it joins the residual.
    post_attention_norm: Option<Vec<f32>>,
    ffn_norm: Vec<f32>,
    /// The gate and up projections stacked (or fused in the file, Phi-3's).
    gate_up: Matrix,
    down: Matrix,
    /// Gemma's RMS norm of the feed-forward block's output.
    post_ffn_norm: Option<Vec<f32>>,
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
    /// The sliding-window layers' own rotary embedding (Gemma 3's).
    sliding_rope: Option<Rope>,
    /// The threads a forward pass runs on (`RAYON_NUM_THREADS`, or one per core). The pass
    /// runs inside the pool, so that each of its parallel steps starts on a worker rather than
    /// waking the pool from outside and sleeping until it is done.
    threads: std::sync::Arc<rayon::ThreadPool>,
}

impl Llama {
    pub(crate) fn load(content: &Content, file: &FileBytes) -> Result<Self, LocalError> {
        let tensors = Tensors { content, file };
        let mut config = Config::read(content)?;
        if tensors.has("rope_factors_long.weight") {
            config.keep_to_trained_context(content);
        }
        let mut embedding = tensors.matrix("token_embd.weight")?;
        expect_cols(&embedding, config.dim, "token_embd.weight")?;
        // The output projection regrouped as the layers' matrices are: the embedding itself
        // when it is also the output (its rows are then read from the regrouped copy).
        let output = if tensors.has("output.weight") {
            let output = tensors.matrix("output.weight")?;
            expect_cols(&output, config.dim, "output.weight")?;
            Some(regrouped(output))
        } else {
            embedding = regrouped(embedding);
            None
        };
        let layers = (0..config.layers)
            .map(|i| load_layer(&tensors, &config, i))
            .collect::<Result<Vec<_>, LocalError>>()?;
        let factors = ["rope_freqs.weight", "rope_factors_short.weight"]
            .into_iter()
            .find(|name| tensors.has(name))
            .map(|name| tensors.values(name))
            .transpose()?;
        let (rope, sliding_rope) = config.ropes(content, factors.as_deref())?;
        let threads = rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("llmtool-local-{i}"))
            .build()
            .map_err(|e| LocalError::Model(format!("cannot start the model's threads: {e}")))?;
        Ok(Self {
            threads: std::sync::Arc::new(threads),
            rope,
            sliding_rope,
            output_norm: vector(&tensors, "output_norm.weight", config.dim)?,
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

    /// The pass, compiled twice: for the CPU's AVX2 where it has it (the work between the
    /// products, on one thread: norms, quantizing, the gate, the rotary embedding, in vectors
    /// of eight rather than four), and for any x86-64 CPU.
    #[allow(unsafe_code, reason = "a call behind a CPU check")]
    fn forward_here(&self, segments: &mut [Segment<'_>]) -> Result<Vec<Vec<f32>>, LocalError> {
        #[cfg(target_arch = "x86_64")]
        if wide_vectors() {
            // SAFETY: the CPU has AVX2 and FMA, which `forward_wide` is compiled with.
            return unsafe { self.forward_wide(segments) };
        }
        self.forward_body(segments)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn forward_wide(&self, segments: &mut [Segment<'_>]) -> Result<Vec<Vec<f32>>, LocalError> {
        self.forward_body(segments)
    }

    #[allow(
        clippy::inline_always,
        reason = "inlined into `forward_wide`, so that the work between the products compiles with AVX2"
    )]
    #[inline(always)]
    fn forward_body(&self, segments: &mut [Segment<'_>]) -> Result<Vec<Vec<f32>>, LocalError> {
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
            if let Some(scale) = config.embedding_scale {
                for v in row.iter_mut() {
                    *v *= scale;
                }
            }
        }
        let angles_of = |rope: &Rope| -> Vec<_> {
            segments
                .iter()
                .flat_map(|s| (s.position..s.position + s.tokens.len()).map(|p| rope.angles(p)))
                .collect()
        };
        let angles = angles_of(&self.rope);
        let sliding_angles = self.sliding_rope.as_ref().map(angles_of);
        let mut normed = vec![0.0; count * dim];
        let mut quantized = Activations::default();
        let mut queries = vec![0.0; count * q_dim];
        let mut attention = vec![0.0; count * q_dim];
        // Products, reused from layer to layer.
        let (mut qkv, mut gate_up, mut products) = (Vec::new(), Vec::new(), Vec::new());
        let (mut scratch, mut activated) = (Vec::new(), Vec::new());
        for (index, layer) in self.layers.iter().enumerate() {
            let window = config.window_of(index);
            let (rope, angles) = match (&self.sliding_rope, &sliding_angles, window) {
                (Some(rope), Some(angles), Some(_)) => (rope, angles),
                _ => (&self.rope, &angles),
            };
            rms_norm(&residual, &layer.attention_norm, config.rms_epsilon, &mut normed);
            quantized.quantize_for(&normed, dim, layer.qkv.forms());
            multiply(&layer.qkv, quantized.all(), &mut qkv, &mut scratch);
            if let Some(bias) = &layer.qkv_bias {
                qkv.chunks_exact_mut(q_dim + 2 * kv_dim).for_each(|row| add(row, bias));
            }
            for ((qkv, query), angles) in qkv
                .chunks_exact_mut(q_dim + 2 * kv_dim)
                .zip(queries.chunks_exact_mut(q_dim))
                .zip(angles)
            {
                let (new_query, key_value) = qkv.split_at_mut(q_dim);
                let (key, _) = key_value.split_at_mut(kv_dim);
                if let Some((query_norm, key_norm)) = &layer.qk_norms {
                    rms_norm_in_place(new_query, query_norm, config.rms_epsilon);
                    rms_norm_in_place(key, key_norm, config.rms_epsilon);
                }
                rope.rotate(angles, new_query, head_dim);
                rope.rotate(angles, key, head_dim);
                query.copy_from_slice(new_query);
            }
            // Each segment's keys and values into its cache, then the attention of all of them.
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
                first += length;
            }
            let attending: Vec<Attending<'_>> = segments
                .iter()
                .map(|s| Attending {
                    cache: &s.cache.layers[index],
                    start: s.position,
                    tokens: s.tokens.len(),
                })
                .collect();
            attend(config, &queries, &attending, window, &mut attention);
            quantized.quantize_for(&attention, q_dim, layer.attention_output.forms());
            multiply(&layer.attention_output, quantized.all(), &mut products, &mut scratch);
            if let Some(norm) = &layer.post_attention_norm {
                rms_norm_in_place(&mut products, norm, config.rms_epsilon);
            }
            add(&mut residual, &products);

            rms_norm(&residual, &layer.ffn_norm, config.rms_epsilon, &mut normed);
            quantized.quantize_for(&normed, dim, layer.gate_up.forms());
            multiply(&layer.gate_up, quantized.all(), &mut gate_up, &mut scratch);
            let hidden = layer.gate_up.rows / 2;
            activated.resize(count * hidden, 0.0);
            for (row, out) in
                gate_up.chunks_exact(2 * hidden).zip(activated.chunks_exact_mut(hidden))
            {
                let (gate, up) = row.split_at(hidden);
                config.activation.gate(gate, up, out);
            }
            quantized.quantize_for(&activated, hidden, layer.down.forms());
            multiply(&layer.down, quantized.all(), &mut products, &mut scratch);
            if let Some(norm) = &layer.post_ffn_norm {
                rms_norm_in_place(&mut products, norm, config.rms_epsilon);
            }
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
        let output = self.output.as_ref().unwrap_or(&self.embedding);
        quantized.quantize_for(&normed_last, dim, output.forms());
        multiply(output, quantized.all(), &mut products, &mut scratch);
        if let Some(cap) = config.logit_cap {
            for v in &mut products {
                *v = (*v / cap).tanh() * cap;
            }
        }
        Ok(products.chunks_exact(output.rows).map(<[f32]>::to_vec).collect())
    }
}

/// `matrix` regrouped by eight rows where the kernels are faster so (a copy of its parts, see
/// [`Matrix::regrouped`]).
fn regrouped(matrix: Matrix) -> Matrix {
    if kernels::prefer_regrouped() { matrix.regrouped() } else { matrix }
}

/// Layer `i`'s weights, checked against the model's shape.
fn load_layer(tensors: &Tensors<'_>, config: &Config, i: usize) -> Result<Layer, LocalError> {
    let (dim, q_dim, kv_dim) = (config.dim, config.q_dim(), config.kv_dim());
    let name = |name: &str| format!("blk.{i}.{name}.weight");
    let matrix = |short: &str, rows: usize, cols: usize| {
        let name = name(short);
        let matrix = tensors.matrix(&name)?;
        expect_cols(&matrix, cols, &name)?;
        if matrix.rows == rows { Ok(matrix) } else { Err(shape_error(&name, &matrix, rows, cols)) }
    };
    let optional = |short: &str, len: usize| {
        let name = name(short);
        if tensors.has(&name) { vector(tensors, &name, len).map(Some) } else { Ok(None) }
    };
    let bias = |short: &str, len: usize| {
        let name = format!("blk.{i}.{short}.bias");
        if tensors.has(&name) { vector(tensors, &name, len).map(Some) } else { Ok(None) }
    };
    let qkv_bias = match (bias("attn_q", q_dim)?, bias("attn_k", kv_dim)?, bias("attn_v", kv_dim)?)
    {
        (Some(q), Some(k), Some(v)) => Some([q, k, v].concat()),
        (None, None, None) => None,
        _ => {
            return Err(LocalError::Model(format!(
                "layer {i} has biases on some of its query, key and value projections but not all"
            )));
        }
    };
    let qk_norms = match (
        optional("attn_q_norm", config.head_dim)?,
        optional("attn_k_norm", config.head_dim)?,
    ) {
        (Some(q), Some(k)) => Some((q, k)),
        (None, None) => None,
        _ => {
            return Err(LocalError::Model(format!(
                "layer {i} normalises its queries or its keys, not both"
            )));
        }
    };
    let fused = config.architecture.fuses_projections();
    let qkv = if fused && tensors.has(&name("attn_qkv")) {
        matrix("attn_qkv", q_dim + 2 * kv_dim, dim)?
    } else {
        Matrix::stack(vec![
            matrix("attn_q", q_dim, dim)?,
            matrix("attn_k", kv_dim, dim)?,
            matrix("attn_v", kv_dim, dim)?,
        ])
    };
    let up = tensors.matrix(&name("ffn_up"))?;
    expect_cols(&up, dim, &name("ffn_up"))?;
    let gate_up = if !fused || tensors.has(&name("ffn_gate")) {
        Matrix::stack(vec![matrix("ffn_gate", up.rows, dim)?, up])
    } else if up.rows % 2 == 0 {
        // Phi-3's: the gate's rows, then the up projection's, in one matrix.
        up
    } else {
        return Err(LocalError::Model(format!(
            "layer {i} has no gate projection, and its up projection of {} rows holds no pair",
            up.rows
        )));
    };
    let hidden = gate_up.rows / 2;
    let gemma = config.architecture.is_gemma();
    let post_norm = |short: &str| {
        if gemma { vector(tensors, &name(short), dim).map(Some) } else { Ok(None) }
    };
    Ok(Layer {
        attention_norm: vector(tensors, &name("attn_norm"), dim)?,
        qkv: regrouped(qkv),
        qkv_bias,
        qk_norms,
        attention_output: regrouped(matrix("attn_output", dim, q_dim)?),
        post_attention_norm: post_norm("post_attention_norm")?,
        ffn_norm: vector(tensors, &name("ffn_norm"), dim)?,
        gate_up: regrouped(gate_up),
        down: regrouped(matrix("ffn_down", dim, hidden)?),
        post_ffn_norm: post_norm("post_ffw_norm")?,
    })
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
fn multiply(weights: &Matrix, xs: Quantized<'_>, out: &mut Vec<f32>, scratch: &mut Vec<f32>) {
    let (rows, count) = (weights.rows, xs.tokens());
    let threads = rayon::current_num_threads();
    // Chunks of whole groups of eight rows, so that a regrouped group is not split between
    // threads (where a stacked matrix's earlier parts are all multiples of eight rows long,
    // as in real models; otherwise a group at a chunk's edge is computed by both threads,
    // each writing only its rows).
    let chunk = rows.div_ceil(threads * 4).max(16).next_multiple_of(8);
    // Every product is written, so the buffers are only sized (kept from call to call: a
    // fresh one each time was zeroed by the kernel, page by page).
    out.resize(rows * count, 0.0);
    if count == 1 {
        out.par_chunks_mut(chunk).enumerate().for_each(|(i, out)| {
            kernels::multiply(weights, i * chunk..i * chunk + out.len(), xs, out);
        });
        return;
    }
    // Each piece of rows is token-major over its own rows, in its own part of `scratch`.
    if scratch.len() < rows * count {
        scratch.resize(rows * count, 0.0);
    }
    let pieces = &mut scratch[..rows * count];
    pieces.par_chunks_mut(chunk * count).enumerate().for_each(|(piece, products)| {
        let range = piece * chunk..((piece + 1) * chunk).min(rows);
        for (run, products) in products.chunks_mut(RUN * range.len()).enumerate() {
            let tokens = run * RUN..(run * RUN + RUN).min(count);
            kernels::multiply(weights, range.clone(), xs.run(tokens), products);
        }
    });
    // Put each piece's rows in place for every token.
    for (piece, products) in pieces.chunks(chunk * count).enumerate() {
        let start = piece * chunk;
        let width = products.len() / count;
        for (token, products) in products.chunks_exact(width).enumerate() {
            out[token * rows + start..][..width].copy_from_slice(products);
        }
    }
}

/// How many activation vectors go through a weight row together.
const RUN: usize = 16;

/// Whether the CPU has AVX2 and FMA (for [`Llama::forward_wide`]).
#[cfg(target_arch = "x86_64")]
fn wide_vectors() -> bool {
    static WIDE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WIDE.get_or_init(|| is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"))
}

/// Each `weight.len()` values of `x` (a head, or a token's row) RMS-normalised in place.
#[inline]
fn rms_norm_in_place(x: &mut [f32], weight: &[f32], epsilon: f32) {
    let mut normed = vec![0.0; weight.len()];
    for row in x.chunks_exact_mut(weight.len()) {
        rms_norm(row, weight, epsilon, &mut normed);
        row.copy_from_slice(&normed);
    }
}

/// Root-mean-square normalization of each `weight.len()` values of `x`, scaled by `weight`.
#[inline]
fn rms_norm(x: &[f32], weight: &[f32], epsilon: f32, out: &mut [f32]) {
    for (x, out) in x.chunks_exact(weight.len()).zip(out.chunks_exact_mut(weight.len())) {
        let mean_square = x.iter().map(|v| v * v).sum::<f32>() / x.len() as f32;
        let scale = 1.0 / (mean_square + epsilon).sqrt();
        for ((o, v), w) in out.iter_mut().zip(x).zip(weight) {
            *o = v * scale * w;
        }
    }
}

#[inline]
fn add(x: &mut [f32], delta: &[f32]) {
    for (x, d) in x.iter_mut().zip(delta) {
        *x += d;
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
