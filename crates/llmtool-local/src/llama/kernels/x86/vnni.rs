//! The regrouped kernels again, for CPUs with AVX-512 VNNI (used at 256 bits, with AVX-512VL):
//! `vpdpbusd` multiplies four unsigned codes by four signed activations and adds the four
//! products to a 32-bit lane in one instruction, where AVX2 needs three (`maddubs`, `madd`,
//! `add`) and sums in 16 bits on the way. With the 32 vector registers AVX-512 brings, two
//! groups (sixteen rows) are multiplied with four tokens at a time: each group's blocks are
//! unpacked once for the four tokens, and each activation word, broadcast from memory, serves
//! both groups (loading them was what bounded a group at a time). A step that decodes several
//! answers together then costs far less a token than one alone.
//!
//! Every 32-value format is taken as unsigned codes and an offset: Q8_0's signed codes are
//! moved up by 128 (their top bit flipped), and the offset takes 128 × the activations' sum
//! back off.

use std::arch::x86_64::{
    __m256, __m256i, _MM_HINT_T0, _MM_HINT_T1, _mm256_dpbusd_epi32, _mm256_fmadd_ps, _mm256_mul_ps,
    _mm256_set1_epi8, _mm256_set1_ps, _mm256_setzero_ps, _mm256_setzero_si256, _mm256_xor_si256,
};

use super::grouped::{byte_chunks, five_bit_chunk, halves, nibble_chunk, store, word};
use super::{PREFETCH_DISTANCE, float, prefetch_ahead};
use crate::llama::blocks::BlockQ8;
use crate::llama::kernels::{Range, Target};
use crate::llama::matrix::{Format, Part};
use crate::llama::repack::{BlockQ4_0x8, BlockQ4_1x8, BlockQ5_0x8, BlockQ5_1x8, BlockQ8_0x8, ROWS};

/// Whether the CPU has the instructions these kernels are compiled with (and
/// `LLMTOOL_NO_AVX512` is not set: the AVX2 kernels, to compare the two).
pub(in crate::llama::kernels) fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        std::env::var_os("LLMTOOL_NO_AVX512").is_none()
            && is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512vl")
            && is_x86_feature_detected!("avx512vnni")
    })
}

/// Every product of `rows` of a part in a regrouped 32-value format with every token of the
/// target's activations.
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512vl,avx512vnni")]
pub(super) fn multiply(part: &Part, rows: Range<usize>, target: &Target<'_>, out: &mut [f32]) {
    let blocks = (rows, target, out);
    // Every format scales its rows by their blocks' `d`; they differ in their offsets and
    // codes.
    macro_rules! run {
        ($block:ty, $offsets:expr, $codes:expr) => {
            in_groups(part.blocks::<$block>(), blocks, |w| halves(&w.d), $offsets, $codes)
        };
    }
    match part.format {
        Format::Q4_0Rows8 => {
            run!(BlockQ4_0x8, |_, d| _mm256_mul_ps(d, _mm256_set1_ps(-8.0)), |w, k| nibble_chunk(
                &w.qs, k
            ))
        }
        Format::Q4_1Rows8 => run!(BlockQ4_1x8, |w, _| halves(&w.m), |w, k| nibble_chunk(&w.qs, k)),
        Format::Q5_0Rows8 => {
            run!(BlockQ5_0x8, |_, d| _mm256_mul_ps(d, _mm256_set1_ps(-16.0)), |w, k| {
                five_bit_chunk(&w.qs, &w.high, k)
            })
        }
        Format::Q5_1Rows8 => {
            run!(BlockQ5_1x8, |w, _| halves(&w.m), |w, k| five_bit_chunk(&w.qs, &w.high, k))
        }
        // Codes c + 128 (the top bit flipped): Σ (c + 128) y = Σ c y + 128 Σ y.
        Format::Q8_0Rows8 => {
            run!(BlockQ8_0x8, |_, d| _mm256_mul_ps(d, _mm256_set1_ps(-128.0)), |w, k| {
                let top = _mm256_set1_epi8(i8::MIN);
                let [first, second] = byte_chunks(&w.qs, k);
                [_mm256_xor_si256(first, top), _mm256_xor_si256(second, top)]
            })
        }
        _ => unreachable!("only the regrouped 32-value formats come here"),
    }
}

/// Runs `$run!(group, t, G, N)` over the groups that hold `$rows` and the `$tokens` tokens:
/// the groups two at a time (the last alone if they are odd), each pair with the tokens four
/// at a time (the last ones two and one at a time). A token alone takes a group at a time:
/// its weights stream from memory in order.
macro_rules! tiled {
    ($rows:expr, $tokens:expr, $run:ident) => {{
        let (rows, tokens): (&Range<usize>, usize) = (&$rows, $tokens);
        let groups = rows.start / ROWS..rows.end.div_ceil(ROWS);
        let mut group = groups.start;
        while group < groups.end {
            let pair = group + 1 < groups.end && tokens > 1;
            let mut t = 0;
            while t < tokens {
                let n = match (pair, tokens - t) {
                    (true, 4..) => $run!(group, t, 2, 4),
                    (true, 2 | 3) => $run!(group, t, 2, 2),
                    (true, _) => $run!(group, t, 2, 1),
                    (false, 4..) => $run!(group, t, 1, 4),
                    (false, 2 | 3) => $run!(group, t, 1, 2),
                    (false, _) => $run!(group, t, 1, 1),
                };
                t += n;
            }
            group += if pair { 2 } else { 1 };
        }
    }};
}
pub(super) use tiled;

/// Every product of `rows` of a regrouped 32-value part with every token of the target's
/// activations, tiled by [`tiled`]; `scales`, `offsets` and `codes` read a format's block, as
/// [`rows_of_blocks`] takes them.
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512vl,avx512vnni")]
fn in_groups<W>(
    blocks: &[W],
    (rows, target, out): (Range<usize>, &Target<'_>, &mut [f32]),
    scales: impl Fn(&W) -> __m256 + Copy,
    offsets: impl Fn(&W, __m256) -> __m256 + Copy,
    codes: impl Fn(&W, usize) -> [__m256i; 2] + Copy,
) {
    let xs = target.xs.blocks;
    let (per_row, tokens) = (target.xs.width / 32, target.xs.tokens());
    // The form of the activations these kernels take was quantized (`Matrix::forms`).
    debug_assert_eq!(xs.len(), tokens * per_row);
    let group_of = |g: usize| &blocks[g * per_row..][..per_row];
    let token = |t: usize| &xs[t * per_row..][..per_row];
    // Multiplies `$g` groups from `group` with `$n` tokens from `t`: how many tokens.
    macro_rules! run {
        ($group:expr, $t:expr, $g:literal, $n:literal) => {{
            let sums = rows_of_blocks::<W, $g, $n>(
                std::array::from_fn(|g| group_of($group + g)),
                std::array::from_fn(|i| token($t + i)),
                scales,
                offsets,
                codes,
            );
            for (g, sums) in sums.into_iter().enumerate() {
                store(sums, $group + g, $t, &rows, target, out);
            }
            $n
        }};
    }
    tiled!(rows, tokens, run);
}

/// Asks for block `i` of each of `groups` ahead of its use, `G` groups on: the groups of a
/// matrix follow each other, so the blocks `G` groups on are the next call's. With several
/// tokens they are asked for that far ahead, into the second-level cache (the first holds the
/// groups being multiplied: a fixed 4 KiB into it fell short of the next pair, and eight
/// tokens waited on memory for half their time). A token alone streams through the weights,
/// and asks 4 KiB ahead into the first, as the AVX2 kernels do.
#[inline]
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512vl,avx512vnni")]
pub(super) fn prefetch_groups<W, const G: usize, const N: usize>(groups: [&[W]; G], i: usize) {
    let ahead = G * groups[0].len() * size_of::<W>();
    for weights in groups {
        if N == 1 {
            prefetch_ahead::<W, _MM_HINT_T0>(weights, i, PREFETCH_DISTANCE);
        } else {
            prefetch_ahead::<W, _MM_HINT_T1>(weights, i, ahead.max(PREFETCH_DISTANCE));
        }
    }
}

/// The products of `G` groups of eight regrouped rows of a 32-value format (each a group's
/// blocks) with `N` tokens' activations, one row per lane. `codes(w, k)` gives chunk `k`'s
/// unsigned codes (0 to 3): codes `4k..4k + 4` of each row, then codes `16 + 4k..`;
/// `offsets(w, d)` what each row's block adds per unit of an activation block's sum, given
/// the rows' scales `d`.
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512vl,avx512vnni")]
fn rows_of_blocks<W, const G: usize, const N: usize>(
    groups: [&[W]; G],
    ys: [&[BlockQ8]; N],
    scales: impl Fn(&W) -> __m256,
    offsets: impl Fn(&W, __m256) -> __m256,
    codes: impl Fn(&W, usize) -> [__m256i; 2],
) -> [[__m256; N]; G] {
    let mut acc = [[_mm256_setzero_ps(); N]; G];
    for i in 0..groups[0].len() {
        let mut sums = [[_mm256_setzero_si256(); N]; G];
        prefetch_groups::<W, G, N>(groups, i);
        for k in 0..4 {
            // Loops, not `array::from_fn`: its closure was not always inlined here.
            let mut chunks = [[_mm256_setzero_si256(); 2]; G];
            for g in 0..G {
                chunks[g] = codes(&groups[g][i], k);
            }
            for t in 0..N {
                let y = &ys[t][i].qs;
                let (low, high) = (word(y, 4 * k), word(y, 16 + 4 * k));
                for g in 0..G {
                    sums[g][t] = _mm256_dpbusd_epi32(sums[g][t], chunks[g][0], low);
                    sums[g][t] = _mm256_dpbusd_epi32(sums[g][t], chunks[g][1], high);
                }
            }
        }
        for g in 0..G {
            let w = &groups[g][i];
            let d = scales(w);
            let offset = offsets(w, d);
            for t in 0..N {
                let y = &ys[t][i];
                let products = _mm256_fmadd_ps(
                    _mm256_mul_ps(d, _mm256_set1_ps(y.d)),
                    float(sums[g][t]),
                    acc[g][t],
                );
                acc[g][t] = _mm256_fmadd_ps(offset, _mm256_set1_ps(y.sum), products);
            }
        }
    }
    acc
}
