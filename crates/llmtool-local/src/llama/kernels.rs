//! Quantized weight rows times quantized activations: AVX2 code where the CPU has it (detected
//! at run time, so one binary runs everywhere, in `kernels/x86.rs`), portable Rust elsewhere.
//!
//! Written by hand because decoding is bound by these dot products, and candle, the tensor
//! crate we first used, has no SIMD kernel for Q4_1 (the default model's format) and computes
//! a K-quant product from its own copy of the weights. These follow llama.cpp's method:
//! activations are quantized to 8 bits per block of 32, and the block products are summed as
//! integers, each weight format read as it is stored in the file. The K formats take the
//! activations in blocks of 256 ([`BlockQ8K`]), so that a super-block's runs are summed as
//! integers and scaled once; the others take blocks of 32.
#![allow(unsafe_code, reason = "SIMD intrinsics: unaligned loads and calls behind a CPU check")]

#[cfg(target_arch = "x86_64")]
mod x86;

use std::ops::Range;

use super::blocks::{
    BLOCK, BlockQ4_0, BlockQ4_1, BlockQ4K, BlockQ5_0, BlockQ5_1, BlockQ5K, BlockQ6K, BlockQ8,
    BlockQ8_0, BlockQ8K, Quantized, SUPER, Stored,
};
use super::matrix::{Format, Matrix, Part};
use super::repack::{
    BlockQ4_0x8, BlockQ4_1x8, BlockQ4Kx8, BlockQ5_0x8, BlockQ5_1x8, BlockQ6Kx8, BlockQ8_0x8,
    Grouped, ROWS,
};

/// `out[t × rows.len() + i]` = row `rows.start + i` of `weights` · token `t` of `xs`. The
/// activations are as wide as the matrix's rows (the loader checks each matrix's columns
/// against the model's widths, and that a K-format matrix's rows are whole super-blocks).
pub(crate) fn multiply(weights: &Matrix, rows: Range<usize>, xs: Quantized<'_>, out: &mut [f32]) {
    debug_assert_eq!(weights.cols, xs.width);
    let width = rows.len();
    for span in weights.spans(rows) {
        let target = Target { xs, width, at: span.at };
        #[cfg(target_arch = "x86_64")]
        if x86::available() {
            // SAFETY: the CPU has every feature `x86::multiply` is compiled with.
            unsafe { x86::multiply(span.part, span.rows, &target, out) };
            continue;
        }
        multiply_portably(span.part, span.rows, &target, out);
    }
}

/// The activations a product takes, and where its results go in `out`: token `t`'s product
/// with row `i` (of the part's rows asked for) at `t × width + at + i`.
struct Target<'a> {
    xs: Quantized<'a>,
    width: usize,
    at: usize,
}

/// A block of quantized activations: its values, and its codes with their scale.
trait Activation {
    const VALUES: usize;
    fn codes(&self) -> (&[i8], f32);
}

impl Activation for BlockQ8 {
    const VALUES: usize = BLOCK;
    fn codes(&self) -> (&[i8], f32) {
        (&self.qs, self.d)
    }
}

impl Activation for BlockQ8K {
    const VALUES: usize = SUPER;
    fn codes(&self) -> (&[i8], f32) {
        (&self.qs, self.d)
    }
}

fn multiply_portably(part: &Part, rows: Range<usize>, target: &Target<'_>, out: &mut [f32]) {
    let (blocks, supers) = (target.xs.blocks, target.xs.supers);
    match part.format {
        Format::Q4_1 => each_product(part.blocks(), blocks, rows, target, out, portable::dot_q4_1),
        Format::Q8_0 => each_product(part.blocks(), blocks, rows, target, out, portable::dot_q8_0),
        Format::Q4_0 => {
            each_product::<BlockQ4_0, _>(part.blocks(), blocks, rows, target, out, dequantized)
        }
        Format::Q5_0 => {
            each_product::<BlockQ5_0, _>(part.blocks(), blocks, rows, target, out, dequantized)
        }
        Format::Q5_1 => {
            each_product::<BlockQ5_1, _>(part.blocks(), blocks, rows, target, out, dequantized)
        }
        Format::Q4K => {
            each_product::<BlockQ4K, _>(part.blocks(), supers, rows, target, out, dequantized)
        }
        Format::Q5K => {
            each_product::<BlockQ5K, _>(part.blocks(), supers, rows, target, out, dequantized)
        }
        Format::Q6K => {
            each_product::<BlockQ6K, _>(part.blocks(), supers, rows, target, out, dequantized)
        }
        Format::Q4_0Rows8 => regrouped_portably::<BlockQ4_0x8, _>(part, blocks, rows, target, out),
        Format::Q4_1Rows8 => regrouped_portably::<BlockQ4_1x8, _>(part, blocks, rows, target, out),
        Format::Q5_0Rows8 => regrouped_portably::<BlockQ5_0x8, _>(part, blocks, rows, target, out),
        Format::Q5_1Rows8 => regrouped_portably::<BlockQ5_1x8, _>(part, blocks, rows, target, out),
        Format::Q8_0Rows8 => regrouped_portably::<BlockQ8_0x8, _>(part, blocks, rows, target, out),
        Format::Q4KRows8 => regrouped_portably::<BlockQ4Kx8, _>(part, supers, rows, target, out),
        Format::Q6KRows8 => regrouped_portably::<BlockQ6Kx8, _>(part, supers, rows, target, out),
    }
}

/// Rows regrouped by eight, each through its dequantized values (a block of `G` holds a
/// block of activations `X` of each of its rows).
fn regrouped_portably<G: Grouped, X: Activation>(
    part: &Part,
    xs: &[X],
    rows: Range<usize>,
    target: &Target<'_>,
    out: &mut [f32],
) {
    debug_assert_eq!(<G::Source as Stored>::VALUES, X::VALUES);
    let blocks: &[G] = part.blocks();
    let per_row = target.xs.width / X::VALUES;
    debug_assert_eq!(xs.len(), target.xs.tokens() * per_row, "the form the kernel takes");
    let mut values = [0.0f32; SUPER];
    let values = &mut values[..X::VALUES];
    for (i, row) in rows.enumerate() {
        let group = &blocks[row / ROWS * per_row..][..per_row];
        for (t, x) in xs.chunks_exact(per_row).enumerate() {
            let mut sum = 0.0;
            for (block, x) in group.iter().zip(x) {
                block.dequantize_row(row % ROWS, values);
                let (codes, d) = x.codes();
                let dot: f32 = values.iter().zip(codes).map(|(v, q)| v * f32::from(*q)).sum();
                sum += dot * d;
            }
            out[t * target.width + target.at + i] = sum;
        }
    }
}

/// Each 32 of `values` quantized to a block, appended to `out`: in AVX2 where the CPU has it,
/// the same codes either way.
pub(crate) fn quantize_q8(values: &[f32], out: &mut Vec<BlockQ8>) {
    #[cfg(target_arch = "x86_64")]
    if x86::available() {
        // SAFETY: the CPU has every feature `x86::q8_blocks` is compiled with.
        unsafe { x86::q8_blocks(values, out) };
        return;
    }
    out.extend(values.chunks_exact(BLOCK).map(BlockQ8::quantize));
}

/// Whether the kernels here multiply rows faster regrouped by eight (the AVX2 ones do).
pub(crate) fn prefer_regrouped() -> bool {
    #[cfg(target_arch = "x86_64")]
    return x86::available();
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Whether Q6_K rows are regrouped too: only the VNNI kernels multiply them faster so.
pub(crate) fn regroup_q6k() -> bool {
    #[cfg(target_arch = "x86_64")]
    return x86::available() && x86::vnni_available();
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Every product of `rows` of a part whose blocks are `blocks` with every token of `xs` (the
/// target's activations in the form `dot` takes).
#[allow(
    clippy::inline_always,
    reason = "inlined into each caller, so that the dot products compile with its CPU features"
)]
#[inline(always)]
fn each_product<W: Stored, X: Activation>(
    blocks: &[W],
    xs: &[X],
    rows: Range<usize>,
    target: &Target<'_>,
    out: &mut [f32],
    dot: impl Fn(&[W], &[X]) -> f32,
) {
    let (per_row, per_token) = (target.xs.width / W::VALUES, target.xs.width / X::VALUES);
    debug_assert_eq!(xs.len(), target.xs.tokens() * per_token, "the form the kernel takes");
    let weights = &blocks[rows.start * per_row..rows.end * per_row];
    for (i, row) in weights.chunks_exact(per_row).enumerate() {
        for (t, x) in xs.chunks_exact(per_token).enumerate() {
            out[t * target.width + target.at + i] = dot(row, x);
        }
    }
}

/// As [`each_product`], two tokens at a time through `two` (which unpacks each weight block
/// once for both), the last odd one through `one`.
#[allow(
    clippy::inline_always,
    reason = "inlined into each caller, so that the dot products compile with its CPU features"
)]
#[inline(always)]
fn each_product_paired<W: Stored, X: Activation>(
    blocks: &[W],
    xs: &[X],
    rows: Range<usize>,
    target: &Target<'_>,
    out: &mut [f32],
    one: impl Fn(&[W], &[X]) -> f32,
    two: impl Fn(&[W], [&[X]; 2]) -> [f32; 2],
) {
    let (per_row, per_token) = (target.xs.width / W::VALUES, target.xs.width / X::VALUES);
    debug_assert_eq!(xs.len(), target.xs.tokens() * per_token, "the form the kernel takes");
    let weights = &blocks[rows.start * per_row..rows.end * per_row];
    let tokens = xs.len() / per_token;
    let token = |t: usize| &xs[t * per_token..(t + 1) * per_token];
    for (i, row) in weights.chunks_exact(per_row).enumerate() {
        let at = |t: usize| t * target.width + target.at + i;
        let mut t = 0;
        while t + 2 <= tokens {
            let [first, second] = two(row, [token(t), token(t + 1)]);
            (out[at(t)], out[at(t + 1)]) = (first, second);
            t += 2;
        }
        if t < tokens {
            out[at(t)] = one(row, token(t));
        }
    }
}

/// A row's product through its dequantized values: the portable way for the formats without
/// an integer kernel of their own here.
fn dequantized<W: Stored, X: Activation>(row: &[W], x: &[X]) -> f32 {
    let mut values = [0.0f32; SUPER];
    let values = &mut values[..W::VALUES];
    let activations = x.iter().flat_map(|x| {
        let (codes, d) = x.codes();
        codes.iter().map(move |&q| d * f32::from(q))
    });
    let mut activations = activations.into_iter();
    row.iter()
        .map(|w| {
            w.dequantize(values);
            values.iter().zip(activations.by_ref()).map(|(v, x)| v * x).sum::<f32>()
        })
        .sum()
}

mod portable {
    use super::{BlockQ4_1, BlockQ8, BlockQ8_0};
    use half::f16;

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
                let (d, m) = (f16::from_le_bytes(w.d).to_f32(), f16::from_le_bytes(w.m).to_f32());
                d * x.d * codes as f32 + m * x.sum
            })
            .sum()
    }

    pub(super) fn dot_q8_0(row: &[BlockQ8_0], x: &[BlockQ8]) -> f32 {
        row.iter()
            .zip(x)
            .map(|(w, x)| {
                let codes: i32 =
                    w.qs.iter().zip(&x.qs).map(|(a, b)| i32::from(*a) * i32::from(*b)).sum();
                f16::from_le_bytes(w.d).to_f32() * x.d * codes as f32
            })
            .sum()
    }
}

#[cfg(test)]
mod tests;
