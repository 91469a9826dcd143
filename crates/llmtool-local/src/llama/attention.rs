//! Causal self-attention over a key/value cache (over all earlier positions, or a sliding
//! window of them), and the rotary position embedding (adjacent pairs rotated, GGUF's
//! convention for llama; or the two halves of each head, GPT-NeoX's).

use rayon::prelude::*;

use super::attention_kernels::{add_weighted, scores};
use super::{Config, math};

/// Rotary position embedding: one frequency per pair of the first `dims` values of each head
/// (the others pass unchanged).
#[derive(Debug, Clone)]
pub(crate) struct Rope {
    inverse_frequencies: Vec<f32>,
    /// Longrope's attention factor, on the rotated values (1 for most models).
    magnitude: f32,
    layout: RopeLayout,
}

impl Rope {
    /// `scale` (a linear scaling factor) and `factors` (llama 3.1's `rope_freqs`, Phi-3's
    /// `rope_factors_short`) divide the frequencies; `magnitude` multiplies what is rotated.
    pub(crate) fn new(
        dims: usize,
        base: f32,
        scale: f32,
        factors: Option<&[f32]>,
        magnitude: f32,
        layout: RopeLayout,
    ) -> Self {
        let inverse_frequencies = (0..dims / 2)
            .map(|i| {
                let frequency = 1.0 / base.powf((2 * i) as f32 / dims as f32) / scale;
                frequency / factors.and_then(|f| f.get(i)).copied().unwrap_or(1.0)
            })
            .collect();
        Self { inverse_frequencies, magnitude, layout }
    }

    /// The (cos, sin) pairs for `position`.
    pub(crate) fn angles(&self, position: usize) -> Vec<(f32, f32)> {
        self.inverse_frequencies
            .iter()
            .map(|f| {
                let (sin, cos) = (position as f32 * f).sin_cos();
                (cos * self.magnitude, sin * self.magnitude)
            })
            .collect()
    }

    /// Rotates every head (of `head_dim` values) in `x` by `angles`.
    #[inline]
    pub(crate) fn rotate(&self, angles: &[(f32, f32)], x: &mut [f32], head_dim: usize) {
        let turn = |a: f32, b: f32, (cos, sin): (f32, f32)| (a * cos - b * sin, a * sin + b * cos);
        for head in x.chunks_exact_mut(head_dim) {
            match self.layout {
                RopeLayout::Interleaved => {
                    for (pair, &angle) in head.chunks_exact_mut(2).zip(angles) {
                        (pair[0], pair[1]) = turn(pair[0], pair[1], angle);
                    }
                }
                RopeLayout::Halves => {
                    let half = angles.len();
                    let (first, second) = head[..2 * half].split_at_mut(half);
                    for ((a, b), &angle) in first.iter_mut().zip(second).zip(angles) {
                        (*a, *b) = turn(*a, *b, angle);
                    }
                }
            }
        }
    }
}

/// Which values of a head the rotary embedding turns together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RopeLayout {
    /// Each value with its neighbour (llama's GGUF files, whose weights are permuted for it).
    Interleaved,
    /// Value `i` with value `i + dims / 2` (GPT-NeoX's layout: Qwen2, Gemma, Phi-3).
    Halves,
}

/// The keys and values of every position seen so far, for one layer.
#[derive(Debug, Clone, Default)]
pub(crate) struct KvCache {
    pub keys: Vec<f32>,
    pub values: Vec<f32>,
}

/// One sequence's part of a pass, for attention: its cache (the keys and values of its new
/// tokens already in it), where its new tokens start, and how many there are.
pub(crate) struct Attending<'a> {
    pub cache: &'a KvCache,
    pub start: usize,
    pub tokens: usize,
}

/// Attention of every sequence's new tokens over its own cache, in one parallel step: `queries`
/// and `out` hold the sequences' tokens one after another (`heads` × `head_dim` values each).
/// A token at position `p` sees positions up to `p`; with a `window`, only the last `window`
/// of them, its own included.
///
/// One step for all the sequences, not one each: when eight answers decode together, each has
/// a token, and a parallel step per sequence and layer cost more in waking the threads than
/// the attention itself.
pub(crate) fn attend(
    config: &Config,
    queries: &[f32],
    sequences: &[Attending<'_>],
    window: Option<usize>,
    out: &mut [f32],
) {
    let head_dim = config.head_dim;
    let kv_dim = config.kv_heads * head_dim;
    let group = config.heads / config.kv_heads;
    let (scale, cap) = (config.attention_scale, config.attention_cap);
    // Each token's sequence and position.
    let owners: Vec<(&KvCache, usize)> = sequences
        .iter()
        .flat_map(|s| (s.start..s.start + s.tokens).map(move |position| (s.cache, position)))
        .collect();
    // One job per token and key/value head: the query heads that share its keys and values
    // (a group, with grouped-query attention) read each of them once, while it is in the cache.
    let jobs = out.par_chunks_mut(group * head_dim).enumerate();
    jobs.for_each_init(Vec::new, |weights: &mut Vec<f32>, (index, out)| {
        let (token, kv_head) = (index / config.kv_heads, index % config.kv_heads);
        let (cache, position) = owners[token];
        let queries = &queries[(token * config.heads + kv_head * group) * head_dim..];
        let kv_offset = kv_head * head_dim;
        let end = position + 1;
        let first = window.map_or(0, |window| end.saturating_sub(window));
        let positions = end - first;
        // weights[g × positions + i]: query head g of the group against position first + i.
        weights.clear();
        weights.resize(group * positions, 0.0);
        let (keys, values) = (&cache.keys[kv_offset..], &cache.values[kv_offset..]);
        for (query, weights) in
            queries.chunks_exact(head_dim).take(group).zip(weights.chunks_exact_mut(positions))
        {
            scores(query, keys, kv_dim, first, weights);
            for weight in weights.iter_mut() {
                let score = *weight * scale;
                *weight = cap.map_or(score, |cap| (score / cap).tanh() * cap);
            }
            softmax(weights);
        }
        out.fill(0.0);
        for (out, weights) in out.chunks_exact_mut(head_dim).zip(weights.chunks_exact(positions)) {
            add_weighted(weights, values, kv_dim, first, out);
        }
    });
}

fn softmax(values: &mut [f32]) {
    let largest = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut total = 0.0;
    for value in values.iter_mut() {
        *value = math::exp(*value - largest);
        total += *value;
    }
    for value in values.iter_mut() {
        *value /= total;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_by_position_zero_is_the_identity_and_keeps_lengths() {
        let rope = Rope::new(4, 10_000.0, 1.0, None, 1.0, RopeLayout::Interleaved);
        let mut x = vec![1.0, 2.0, 3.0, 4.0];
        rope.rotate(&rope.angles(0), &mut x, 4);
        assert_eq!(x, [1.0, 2.0, 3.0, 4.0]);
        rope.rotate(&rope.angles(7), &mut x, 4);
        assert!(((x[0] * x[0] + x[1] * x[1]) - 5.0).abs() < 1e-5);
        assert!(((x[2] * x[2] + x[3] * x[3]) - 25.0).abs() < 1e-4);
        // The first pair turns by 7 radians.
        assert!((x[0] - (7.0f32.cos() - 2.0 * 7.0f32.sin())).abs() < 1e-5);
    }

    #[test]
    fn the_halves_layout_turns_each_value_with_the_one_half_a_head_away() {
        let rope = Rope::new(4, 10_000.0, 1.0, None, 1.0, RopeLayout::Halves);
        let mut x = vec![1.0, 2.0, 3.0, 4.0];
        rope.rotate(&rope.angles(7), &mut x, 4);
        // Values 0 and 2 are the first pair, turned by 7 radians; 1 and 3 the second.
        assert!((x[0] - (7.0f32.cos() - 3.0 * 7.0f32.sin())).abs() < 1e-5);
        assert!((x[2] - (7.0f32.sin() + 3.0 * 7.0f32.cos())).abs() < 1e-5);
        assert!(((x[1] * x[1] + x[3] * x[3]) - 20.0).abs() < 1e-4);
    }

    #[test]
    fn each_query_head_attends_through_the_key_value_head_of_its_group() {
        // Four query heads over two key/value heads (heads 0 and 1 share the first, 2 and 3 the
        // second), five cached positions, two tokens at positions 3 and 4, all values distinct:
        // the same as each head computed alone, with exp and a division.
        let (heads, kv_heads, head_dim, positions) = (4, 2, 4, 5);
        let config =
            Config { heads, kv_heads, head_dim, attention_scale: 0.5, ..Config::default() };
        let kv_dim = kv_heads * head_dim;
        let wave = |i: usize, k: f32| ((i as f32) * k).sin();
        let cache = KvCache {
            keys: (0..positions * kv_dim).map(|i| wave(i, 0.7)).collect(),
            values: (0..positions * kv_dim).map(|i| wave(i, 1.3)).collect(),
        };
        let queries: Vec<f32> = (0..2 * heads * head_dim).map(|i| wave(i, 0.37)).collect();
        let mut out = vec![0.0; queries.len()];
        let one = [Attending { cache: &cache, start: 3, tokens: 2 }];
        attend(&config, &queries, &one, None, &mut out);
        for token in 0..2 {
            for head in 0..heads {
                let query = &queries[(token * heads + head) * head_dim..][..head_dim];
                let at = |p: usize| p * kv_dim + head / (heads / kv_heads) * head_dim;
                let visible = 3 + token + 1;
                let scores: Vec<f64> = (0..visible)
                    .map(|p| {
                        let key = &cache.keys[at(p)..][..head_dim];
                        0.5 * query.iter().zip(key).map(|(q, k)| f64::from(q * k)).sum::<f64>()
                    })
                    .collect();
                let total: f64 = scores.iter().map(|s| s.exp()).sum();
                for d in 0..head_dim {
                    let expected: f64 = (0..visible)
                        .map(|p| scores[p].exp() / total * f64::from(cache.values[at(p) + d]))
                        .sum();
                    let ours = out[(token * heads + head) * head_dim + d];
                    assert!(
                        (f64::from(ours) - expected).abs() < 1e-5,
                        "token {token}, head {head}"
                    );
                }
            }
        }
    }

    #[test]
    fn sequences_attended_together_are_attended_as_alone() {
        // Two sequences with caches of their own (five and three positions), two new tokens
        // and one: together in one step, the same values as each alone.
        let config = Config {
            heads: 4,
            kv_heads: 2,
            head_dim: 4,
            attention_scale: 0.5,
            ..Config::default()
        };
        let kv_dim = config.kv_heads * config.head_dim;
        let wave = |i: usize, k: f32| ((i as f32) * k).sin();
        let cache = |positions: usize, k: f32| KvCache {
            keys: (0..positions * kv_dim).map(|i| wave(i, k)).collect(),
            values: (0..positions * kv_dim).map(|i| wave(i, k + 0.5)).collect(),
        };
        let (first, second) = (cache(5, 0.7), cache(3, 1.1));
        let width = config.heads * config.head_dim;
        let queries: Vec<f32> = (0..3 * width).map(|i| wave(i, 0.37)).collect();
        let mut together = vec![0.0; queries.len()];
        let both = [
            Attending { cache: &first, start: 3, tokens: 2 },
            Attending { cache: &second, start: 2, tokens: 1 },
        ];
        attend(&config, &queries, &both, None, &mut together);
        let mut alone = vec![0.0; queries.len()];
        let (head, tail) = alone.split_at_mut(2 * width);
        attend(&config, &queries[..2 * width], &both[..1], None, head);
        attend(&config, &queries[2 * width..], &both[1..], None, tail);
        assert_eq!(together, alone);
    }

    #[test]
    fn a_query_attends_only_to_positions_up_to_its_own() {
        let config = Config {
            heads: 2,
            kv_heads: 1,
            head_dim: 2,
            attention_scale: 1.0,
            ..Config::default()
        };
        // Three positions; the values are 1, 2, 3 (both components).
        let cache = KvCache {
            keys: vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            values: vec![1.0, 1.0, 2.0, 2.0, 3.0, 3.0],
        };
        let queries = vec![1.0; 2 * 2 * 2];
        let mut out = vec![0.0; 2 * 2 * 2];
        // Tokens at positions 1 and 2: equal keys, so the mean of the visible values.
        let one = [Attending { cache: &cache, start: 1, tokens: 2 }];
        attend(&config, &queries, &one, None, &mut out);
        assert_eq!(out[..4], [1.5; 4]);
        assert_eq!(out[4..], [2.0; 4]);
        // A window of two: positions 0 and 1 for the first, 1 and 2 for the second.
        attend(&config, &queries, &one, Some(2), &mut out);
        assert_eq!(out[..4], [1.5; 4]);
        assert_eq!(out[4..], [2.5; 4]);
    }
}
