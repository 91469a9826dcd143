//! Quantized weight rows times quantized activations: AVX2 code where the CPU has it (detected
//! at run time, so one binary runs everywhere), portable Rust elsewhere.
//!
//! Written by hand because decoding a small model is bound by these dot products, and candle,
//! the crate we load GGUF files with, has no SIMD kernel for Q4_1 (llama.cpp's format for the
//! default model), so it ran at a third of llama.cpp's speed. These follow llama.cpp's method:
//! activations are quantized to 8 bits per block, and the block products are summed as integers.
#![allow(unsafe_code, reason = "SIMD intrinsics: unaligned loads and calls behind a CPU check")]

use std::ops::Range;

use super::blocks::{BlockQ4_1, BlockQ8, BlockQ8_0};
use super::matrix::{Blocks, Matrix};

/// `out[t × rows.len() + i]` = row `rows.start + i` of `weights` · `xs[t]`, for the activation
/// vectors in `xs` (each `weights.blocks_per_row()` blocks).
pub(crate) fn multiply(weights: &Matrix, rows: Range<usize>, xs: &[BlockQ8], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if x86::available() {
        // SAFETY: the CPU has every feature `x86::multiply` is compiled with.
        unsafe { x86::multiply(weights, rows, xs, out) };
        return;
    }
    multiply_portably(weights, rows, xs, out);
}

fn multiply_portably(weights: &Matrix, rows: Range<usize>, xs: &[BlockQ8], out: &mut [f32]) {
    let per_row = weights.blocks_per_row();
    match &weights.blocks {
        Blocks::Q4_1(blocks) => each_product(blocks, per_row, rows, xs, out, portable::dot_q4_1),
        Blocks::Q8_0(blocks) => each_product(blocks, per_row, rows, xs, out, portable::dot_q8_0),
    }
}

#[allow(
    clippy::inline_always,
    reason = "inlined into each caller, so that the dot products compile with its CPU features"
)]
#[inline(always)]
fn each_product<W>(
    blocks: &[W],
    per_row: usize,
    rows: Range<usize>,
    xs: &[BlockQ8],
    out: &mut [f32],
    dot: impl Fn(&[W], &[BlockQ8]) -> f32,
) {
    let width = rows.len();
    for (i, row) in
        blocks[rows.start * per_row..rows.end * per_row].chunks_exact(per_row).enumerate()
    {
        for (t, x) in xs.chunks_exact(per_row).enumerate() {
            out[t * width + i] = dot(row, x);
        }
    }
}

mod portable {
    use super::{BlockQ4_1, BlockQ8, BlockQ8_0};

    pub(super) fn dot_q4_1(row: &[BlockQ4_1], x: &[BlockQ8]) -> f32 {
        row.iter()
            .zip(x)
            .map(|(w, x)| {
                let (low, high) = x.qs.split_at(16);
                let codes: i32 =
                    w.qs.iter()
                        .zip(low.iter().zip(high))
                        .map(|(b, (l, h))| {
                            i32::from(b & 0x0F) * i32::from(*l) + i32::from(b >> 4) * i32::from(*h)
                        })
                        .sum();
                w.d.to_f32() * x.d * codes as f32 + w.m.to_f32() * x.sum
            })
            .sum()
    }

    pub(super) fn dot_q8_0(row: &[BlockQ8_0], x: &[BlockQ8]) -> f32 {
        row.iter()
            .zip(x)
            .map(|(w, x)| {
                let codes: i32 =
                    w.qs.iter().zip(&x.qs).map(|(a, b)| i32::from(*a) * i32::from(*b)).sum();
                w.d.to_f32() * x.d * codes as f32
            })
            .sum()
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m256, _mm_add_ps, _mm_add_ss, _mm_cvtph_ps, _mm_cvtsi32_si128, _mm_cvtss_f32,
        _mm_loadu_si128, _mm_movehdup_ps, _mm_movehl_ps, _mm_srli_epi16, _mm256_and_si256,
        _mm256_castps256_ps128, _mm256_cvtepi32_ps, _mm256_extractf128_ps, _mm256_fmadd_ps,
        _mm256_loadu_si256, _mm256_madd_epi16, _mm256_maddubs_epi16, _mm256_set_m128i,
        _mm256_set1_epi8, _mm256_set1_epi16, _mm256_set1_ps, _mm256_setzero_ps, _mm256_sign_epi8,
    };

    use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};

    use half::f16;

    /// How far ahead of the block being multiplied its row's bytes are prefetched.
    const PREFETCH_DISTANCE: usize = 4096;

    use super::{BlockQ4_1, BlockQ8, BlockQ8_0, Blocks, Matrix, Range, each_product};

    pub(super) fn available() -> bool {
        is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("fma")
            && is_x86_feature_detected!("f16c")
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    pub(super) fn multiply(weights: &Matrix, rows: Range<usize>, xs: &[BlockQ8], out: &mut [f32]) {
        let per_row = weights.blocks_per_row();
        match &weights.blocks {
            Blocks::Q4_1(blocks) => {
                each_product(blocks, per_row, rows, xs, out, |w, x| dot_q4_1(w, x));
            }
            Blocks::Q8_0(blocks) => {
                each_product(blocks, per_row, rows, xs, out, |w, x| dot_q8_0(w, x));
            }
        }
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    fn dot_q4_1(row: &[BlockQ4_1], x: &[BlockQ8]) -> f32 {
        let low_nibble = _mm256_set1_epi8(0x0F);
        let ones = _mm256_set1_epi16(1);
        let mut acc = _mm256_setzero_ps();
        let mut offsets = 0.0f32;
        for (i, (w, x)) in row.iter().zip(x).enumerate() {
            prefetch(row, i);
            // SAFETY: each load reads exactly its array (16 and 32 bytes; unaligned loads).
            let (packed, y) = unsafe {
                (_mm_loadu_si128(w.qs.as_ptr().cast()), _mm256_loadu_si256(x.qs.as_ptr().cast()))
            };
            // Codes 0..16 from the low nibbles, 16..32 from the high ones.
            let codes =
                _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16::<4>(packed), packed), low_nibble);
            let products = _mm256_madd_epi16(_mm256_maddubs_epi16(codes, y), ones);
            let scale = _mm256_set1_ps(to_f32(w.d) * x.d);
            acc = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(products), acc);
            offsets += to_f32(w.m) * x.sum;
        }
        sum(acc) + offsets
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    fn dot_q8_0(row: &[BlockQ8_0], x: &[BlockQ8]) -> f32 {
        let ones = _mm256_set1_epi16(1);
        let mut acc = _mm256_setzero_ps();
        for (i, (w, x)) in row.iter().zip(x).enumerate() {
            prefetch(row, i);
            // SAFETY: each load reads exactly its 32-byte array (unaligned loads).
            let (codes, y) = unsafe {
                (_mm256_loadu_si256(w.qs.as_ptr().cast()), _mm256_loadu_si256(x.qs.as_ptr().cast()))
            };
            // maddubs multiplies unsigned by signed bytes: move the weight's sign onto y.
            let magnitudes = _mm256_sign_epi8(codes, codes);
            let signed_y = _mm256_sign_epi8(y, codes);
            let products = _mm256_madd_epi16(_mm256_maddubs_epi16(magnitudes, signed_y), ones);
            let scale = _mm256_set1_ps(to_f32(w.d) * x.d);
            acc = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(products), acc);
        }
        sum(acc)
    }

    /// Asks for the bytes `PREFETCH_DISTANCE` past block `i` of `row` (the rows of a matrix
    /// follow each other, so this is what the next blocks will read). Without it, decoding
    /// waits on the weights arriving from the last-level cache for half of its time.
    #[target_feature(enable = "avx2,fma,f16c")]
    fn prefetch<B>(row: &[B], i: usize) {
        let address = row.as_ptr().wrapping_add(i).cast::<i8>().wrapping_add(PREFETCH_DISTANCE);
        _mm_prefetch::<_MM_HINT_T0>(address);
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    fn to_f32(value: f16) -> f32 {
        _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(i32::from(value.to_bits()))))
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    fn sum(v: __m256) -> f32 {
        let halves = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let pairs = _mm_add_ps(halves, _mm_movehl_ps(halves, halves));
        _mm_cvtss_f32(_mm_add_ss(pairs, _mm_movehdup_ps(pairs)))
    }
}

#[cfg(test)]
mod tests {
    use half::f16;

    use super::*;
    use crate::llama::blocks::BLOCK;

    fn pseudo_random(seed: u32, count: usize) -> Vec<f32> {
        let mut state = seed;
        (0..count)
            .map(|_| {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (state >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
            })
            .collect()
    }

    fn q4_1_matrix(rows: usize, cols: usize) -> Matrix {
        let blocks = (0..rows * cols / BLOCK)
            .map(|i| {
                let mut qs = [0u8; 16];
                for (j, q) in qs.iter_mut().enumerate() {
                    *q = ((i * 7 + j * 3) % 256) as u8;
                }
                BlockQ4_1 {
                    d: f16::from_f32(0.01 + (i % 5) as f32 * 0.003),
                    m: f16::from_f32(-0.05 + (i % 3) as f32 * 0.02),
                    qs,
                }
            })
            .collect();
        Matrix { rows, cols, blocks: Blocks::Q4_1(blocks) }
    }

    /// The exact product of the dequantized matrix with the dequantized activations,
    /// token-major.
    fn reference(weights: &Matrix, xs: &[BlockQ8]) -> Vec<f32> {
        let mut row = vec![0.0; weights.cols];
        let mut rows = Vec::new();
        for r in 0..weights.rows {
            weights.row(r, &mut row);
            rows.push(row.clone());
        }
        let mut out = Vec::new();
        for x in xs.chunks_exact(weights.blocks_per_row()) {
            for row in &rows {
                let dot: f64 = x
                    .iter()
                    .flat_map(|b| b.qs.iter().map(move |q| f64::from(b.d) * f64::from(*q)))
                    .zip(row)
                    .map(|(a, w)| a * f64::from(*w))
                    .sum();
                out.push(dot as f32);
            }
        }
        out
    }

    type Multiply = fn(&Matrix, Range<usize>, &[BlockQ8], &mut [f32]);

    #[test]
    fn every_format_matches_the_dequantized_product() {
        let (rows, cols, n) = (24, 128, 3);
        let mut xs = Vec::new();
        crate::llama::blocks::quantize_activations(&pseudo_random(7, cols * n), &mut xs);
        let q4_1 = q4_1_matrix(rows, cols);
        let empty = Matrix { blocks: Blocks::Q8_0(Vec::new()), rows: 0, cols };
        let q8_0 = Matrix::stack(vec![q4_1.clone(), empty]);
        assert!(matches!(q8_0.blocks, Blocks::Q8_0(_)));
        for weights in [&q4_1, &q8_0] {
            let expected = reference(weights, &xs);
            for run in [multiply as Multiply, multiply_portably] {
                let mut out = vec![0.0; rows * n];
                run(weights, 0..rows, &xs, &mut out);
                for (a, b) in out.iter().zip(&expected) {
                    assert!((a - b).abs() < 1e-3 * b.abs().max(1.0), "{a} vs {b}");
                }
                // A range of rows: the same values, in a narrower token-major layout.
                let mut part = vec![0.0; 5 * n];
                run(weights, 10..15, &xs, &mut part);
                for t in 0..n {
                    assert_eq!(part[t * 5..t * 5 + 5], out[t * rows + 10..t * rows + 15]);
                }
            }
        }
    }
}
