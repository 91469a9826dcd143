//! The AVX2 dot products, one per weight format. Each takes a weight row as it is stored and
//! the row's activations quantized to Q8 blocks of 32; integer products are summed in 32-bit
//! lanes and scaled once per run of 32 (or 16) values.

use std::arch::x86_64::{
    __m128, __m128i, __m256, __m256i, _MM_HINT_T0, _mm_add_ps, _mm_add_ss, _mm_cvtepi32_ps,
    _mm_cvtph_ps, _mm_cvtsi32_si128, _mm_cvtss_f32, _mm_fmadd_ps, _mm_hadd_epi16, _mm_loadu_si128,
    _mm_madd_epi16, _mm_movehdup_ps, _mm_movehl_ps, _mm_prefetch, _mm_set_epi32, _mm_set_epi64x,
    _mm_set1_ps, _mm_setzero_ps, _mm_shuffle_epi8, _mm_srli_epi16, _mm256_add_epi32,
    _mm256_and_si256, _mm256_castps256_ps128, _mm256_castsi256_si128, _mm256_cmpeq_epi8,
    _mm256_cvtepi8_epi16, _mm256_cvtepi32_ps, _mm256_cvtepu8_epi16, _mm256_extractf128_ps,
    _mm256_extracti128_si256, _mm256_fmadd_ps, _mm256_loadu_si256, _mm256_madd_epi16,
    _mm256_maddubs_epi16, _mm256_or_si256, _mm256_permute2x128_si256, _mm256_set_m128i,
    _mm256_set1_epi8, _mm256_set1_epi16, _mm256_set1_epi32, _mm256_set1_epi64x, _mm256_set1_ps,
    _mm256_setr_epi8, _mm256_setzero_ps, _mm256_setzero_si256, _mm256_shuffle_epi8,
    _mm256_sign_epi8, _mm256_slli_epi16, _mm256_slli_epi32, _mm256_srl_epi16, _mm256_srli_epi16,
    _mm256_sub_epi32,
};

use super::{
    BlockQ4_0, BlockQ4_1, BlockQ4K, BlockQ5_0, BlockQ5_1, BlockQ5K, BlockQ6K, BlockQ8, BlockQ8_0,
    BlockQ8K, Format, Part, Range, Target, each_product, each_product_paired, multiply_portably,
};
#[cfg(test)]
use crate::llama::blocks::scale_and_min;

mod grouped;
mod quantize;
mod vnni;
mod vnni_k;

pub(super) use quantize::q8_blocks;
pub(super) use vnni::available as vnni_available;

/// How far ahead of the block being multiplied its row's bytes are prefetched.
const PREFETCH_DISTANCE: usize = 4096;

pub(super) fn available() -> bool {
    is_x86_feature_detected!("avx2")
        && is_x86_feature_detected!("fma")
        && is_x86_feature_detected!("f16c")
}

#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn multiply(part: &Part, rows: Range<usize>, target: &Target<'_>, out: &mut [f32]) {
    let (xs, supers) = (target.xs.blocks, target.xs.supers);
    // A format whose kernel takes one token or two (`dot` is generic over the count).
    macro_rules! paired {
        ($activations:expr, $dot:ident) => {
            each_product_paired(
                part.blocks(),
                $activations,
                rows,
                target,
                out,
                |w, x| $dot(w, [x])[0],
                |w, xs| $dot(w, xs),
            )
        };
    }
    // A regrouped format, whose kernel takes one token or two.
    macro_rules! in_groups {
        ($activations:expr, $rows:ident) => {
            grouped::in_groups(
                part.blocks(),
                $activations,
                rows,
                target,
                out,
                |w, x| grouped::$rows(w, x),
                |w, xs| grouped::$rows(w, xs),
            )
        };
    }
    if part.format.is_regrouped_blocks() && vnni::available() {
        // SAFETY: the CPU has every feature `vnni::multiply` is compiled with.
        unsafe { vnni::multiply(part, rows, target, out) };
        return;
    }
    if part.format == Format::Q6KRows8 && vnni::available() {
        // SAFETY: the CPU has every feature `vnni_k::q6k` is compiled with.
        unsafe { vnni_k::q6k(part.blocks(), rows, target, out) };
        return;
    }
    // A token alone streams Q4_K's weights from memory faster through the AVX2 kernel (the
    // 1.5B model decoded at 31 to 39 tokens a second so, 28 to 30 through the VNNI one, in
    // three alternating runs), which gives the same numbers as the VNNI one.
    if part.format == Format::Q4KRows8 && target.xs.tokens() > 1 && vnni::available() {
        // SAFETY: the CPU has every feature `vnni_k::q4k` is compiled with.
        unsafe { vnni_k::q4k(part.blocks(), rows, target, out) };
        return;
    }
    match part.format {
        Format::Q4_0 => paired!(xs, dot_q4_0),
        Format::Q4_1 => paired!(xs, dot_q4_1),
        Format::Q5_0 => paired!(xs, dot_q5_0),
        Format::Q5_1 => paired!(xs, dot_q5_1),
        Format::Q8_0 => paired!(xs, dot_q8_0),
        Format::Q4K => each_product(part.blocks(), supers, rows, target, out, |w, x| dot_q4k(w, x)),
        Format::Q5K => each_product(part.blocks(), supers, rows, target, out, |w, x| dot_q5k(w, x)),
        Format::Q6K => paired!(supers, dot_q6k),
        Format::Q4_0Rows8 => in_groups!(xs, q4_0_rows),
        Format::Q4_1Rows8 => in_groups!(xs, q4_1_rows),
        Format::Q5_0Rows8 => in_groups!(xs, q5_0_rows),
        Format::Q5_1Rows8 => in_groups!(xs, q5_1_rows),
        Format::Q8_0Rows8 => in_groups!(xs, q8_0_rows),
        Format::Q4KRows8 => in_groups!(supers, q4k_rows),
        // Regrouped only for the VNNI kernel (`regroup_q6k`); without it, correct but slow.
        Format::Q6KRows8 => multiply_portably(part, rows, target, out),
    }
}

/// The 32 four-bit codes of 16 bytes: the low nibbles, then the high ones.
#[target_feature(enable = "avx2,fma,f16c")]
fn nibbles(qs: &[u8; 16]) -> __m256i {
    // SAFETY: reads exactly the 16 bytes of the array (an unaligned load).
    let packed = unsafe { _mm_loadu_si128(qs.as_ptr().cast()) };
    _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16::<4>(packed), packed), _mm256_set1_epi8(0x0F))
}

/// 0x10 in byte `i` where bit `i` of `qh` (little-endian) is set, else 0.
#[target_feature(enable = "avx2,fma,f16c")]
fn fifth_bits(qh: [u8; 4]) -> __m256i {
    let bits = i32::from_le_bytes(qh);
    // Byte i takes the byte of `bits` that holds bit i, then keeps that bit alone.
    let spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32(bits),
        _mm256_setr_epi8(
            0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3,
            3, 3, 3,
        ),
    );
    let each_bit = _mm256_set1_epi64x(0x8040_2010_0804_0201_u64.cast_signed());
    let set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, each_bit), each_bit);
    _mm256_and_si256(set, _mm256_set1_epi8(0x10))
}

/// Σ code × y over 32 unsigned codes (below 128) and 32 signed activations, in 8 lanes.
#[target_feature(enable = "avx2,fma,f16c")]
fn products(codes: __m256i, y: &[i8; 32]) -> __m256i {
    // SAFETY: reads exactly the 32 bytes of the array (an unaligned load).
    let y = unsafe { _mm256_loadu_si256(y.as_ptr().cast()) };
    _mm256_madd_epi16(_mm256_maddubs_epi16(codes, y), _mm256_set1_epi16(1))
}

/// As [`products`] for signed codes: maddubs multiplies unsigned by signed bytes, so the
/// codes' signs move onto the activations.
#[target_feature(enable = "avx2,fma,f16c")]
fn signed_products(codes: __m256i, y: &[i8; 32]) -> __m256i {
    // SAFETY: reads exactly the 32 bytes of the array (an unaligned load).
    let y = unsafe { _mm256_loadu_si256(y.as_ptr().cast()) };
    let magnitudes = _mm256_sign_epi8(codes, codes);
    _mm256_madd_epi16(
        _mm256_maddubs_epi16(magnitudes, _mm256_sign_epi8(y, codes)),
        _mm256_set1_epi16(1),
    )
}

/// A row of 32-value blocks times `N` tokens' activations: each block's codes are unpacked
/// once (`codes`, with whether they are signed) for all the tokens, and its scale read once;
/// `offset(w, x)` is what a block adds beyond its codes' products (for the formats whose
/// codes are offset or have a minimum).
#[target_feature(enable = "avx2,fma,f16c")]
fn dot_blocks<W, const N: usize>(
    row: &[W],
    xs: [&[BlockQ8]; N],
    scale: impl Fn(&W) -> f32,
    codes: impl Fn(&W) -> (__m256i, bool),
    offset: impl Fn(&W, &BlockQ8) -> f32,
) -> [f32; N] {
    let mut acc = [_mm256_setzero_ps(); N];
    let mut offsets = [0.0f32; N];
    for (i, w) in row.iter().enumerate() {
        prefetch(row, i);
        let d = scale(w);
        let (codes, signed) = codes(w);
        for t in 0..N {
            let x = &xs[t][i];
            let products =
                if signed { signed_products(codes, &x.qs) } else { products(codes, &x.qs) };
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * x.d), float(products), acc[t]);
            offsets[t] += offset(w, x);
        }
    }
    std::array::from_fn(|t| sum(acc[t]) + offsets[t])
}

#[target_feature(enable = "avx2,fma,f16c")]
fn dot_q4_0<const N: usize>(row: &[BlockQ4_0], xs: [&[BlockQ8]; N]) -> [f32; N] {
    let codes = |w: &BlockQ4_0| (nibbles(&w.qs), false);
    dot_blocks(row, xs, |w| half(w.d), codes, |w, x| -8.0 * half(w.d) * x.sum)
}

#[target_feature(enable = "avx2,fma,f16c")]
fn dot_q4_1<const N: usize>(row: &[BlockQ4_1], xs: [&[BlockQ8]; N]) -> [f32; N] {
    let codes = |w: &BlockQ4_1| (nibbles(&w.qs), false);
    dot_blocks(row, xs, |w| half(w.d), codes, |w, x| half(w.m) * x.sum)
}

#[target_feature(enable = "avx2,fma,f16c")]
fn dot_q5_0<const N: usize>(row: &[BlockQ5_0], xs: [&[BlockQ8]; N]) -> [f32; N] {
    let codes = |w: &BlockQ5_0| (_mm256_or_si256(nibbles(&w.qs), fifth_bits(w.qh)), false);
    dot_blocks(row, xs, |w| half(w.d), codes, |w, x| -16.0 * half(w.d) * x.sum)
}

#[target_feature(enable = "avx2,fma,f16c")]
fn dot_q5_1<const N: usize>(row: &[BlockQ5_1], xs: [&[BlockQ8]; N]) -> [f32; N] {
    let codes = |w: &BlockQ5_1| (_mm256_or_si256(nibbles(&w.qs), fifth_bits(w.qh)), false);
    dot_blocks(row, xs, |w| half(w.d), codes, |w, x| half(w.m) * x.sum)
}

#[target_feature(enable = "avx2,fma,f16c")]
fn dot_q8_0<const N: usize>(row: &[BlockQ8_0], xs: [&[BlockQ8]; N]) -> [f32; N] {
    // SAFETY: reads exactly the 32-byte array (an unaligned load).
    let codes = |w: &BlockQ8_0| (unsafe { _mm256_loadu_si256(w.qs.as_ptr().cast()) }, true);
    dot_blocks(row, xs, |w| half(w.d), codes, |_, _| 0.0)
}

/// The eight 6-bit scales and minimums of a Q4_K or Q5_K block, unpacked four at a time in
/// 32-bit words (as [`scale_and_min`] reads them one by one, without its branch): the scales
/// in the low 8 bytes, the minimums in the high 8.
#[allow(clippy::inline_always, reason = "a few word operations, in every block of the loop")]
#[inline(always)]
fn scales_and_mins(packed: &[u8; 12]) -> [u32; 4] {
    let word =
        |i: usize| u32::from_le_bytes([packed[i], packed[i + 1], packed[i + 2], packed[i + 3]]);
    let (a, b, c) = (word(0), word(4), word(8));
    let (six_bits, low_four, top_two) = (0x3F3F_3F3F, 0x0F0F_0F0F, 0x0303_0303);
    [
        a & six_bits,
        (c & low_four) | (((a >> 6) & top_two) << 4),
        b & six_bits,
        ((c >> 4) & low_four) | (((b >> 6) & top_two) << 4),
    ]
}

/// The unpacked scales and minimums as 16-bit lanes: scales in the low half, minimums in the
/// high half.
#[target_feature(enable = "avx2,fma,f16c")]
fn widened(words: [u32; 4]) -> __m256i {
    let [a, b, c, d] = words.map(u32::cast_signed);
    _mm256_cvtepu8_epi16(_mm_set_epi32(d, c, b, a))
}

/// Σ minimum × codes over the eight runs of 32 of a K block, in 4 lanes: the minimums (16-bit
/// lanes) against the sums of each run's codes (two sums of 16 each).
#[target_feature(enable = "avx2,fma,f16c")]
fn minimums(mins: __m128i, y: &BlockQ8K) -> __m128i {
    // SAFETY: reads exactly the 16 two-byte sums (an unaligned load).
    let sums = unsafe { _mm256_loadu_si256(y.sums.as_ptr().cast()) };
    let per_run = _mm_hadd_epi16(_mm256_castsi256_si128(sums), _mm256_extracti128_si256::<1>(sums));
    _mm_madd_epi16(mins, per_run)
}

/// 32 activation codes from `y` at `at`, as a vector.
#[target_feature(enable = "avx2,fma,f16c")]
fn codes_at(y: &BlockQ8K, at: usize) -> __m256i {
    // SAFETY: reads 32 of the 256 bytes of the array (`at` ≤ 224; an unaligned load).
    unsafe { _mm256_loadu_si256(y.qs[at..at + 32].as_ptr().cast()) }
}

/// Lane `i` of eight 16-bit scales (in both halves of `scales`) in every 16-bit lane.
#[target_feature(enable = "avx2,fma,f16c")]
fn scale_of(scales: __m256i, i: u8) -> __m256i {
    _mm256_shuffle_epi8(scales, _mm256_set1_epi16(i16::from_le_bytes([2 * i, 2 * i + 1])))
}

/// The eight scaled runs of a Q4_K or Q5_K block, summed as integers: `codes(pair)` gives the
/// codes of runs 2 × pair and 2 × pair + 1, and `scales` holds the eight scales as 16-bit
/// lanes, in both halves.
#[target_feature(enable = "avx2,fma,f16c")]
fn scaled_runs(scales: __m256i, y: &BlockQ8K, codes: impl Fn(usize) -> [__m256i; 2]) -> __m256i {
    let mut total = _mm256_setzero_si256();
    for pair in 0..4 {
        let [first, second] = codes(pair);
        let run = 2 * pair as u8;
        let first = _mm256_madd_epi16(
            _mm256_maddubs_epi16(first, codes_at(y, 64 * pair)),
            scale_of(scales, run),
        );
        let second = _mm256_madd_epi16(
            _mm256_maddubs_epi16(second, codes_at(y, 64 * pair + 32)),
            scale_of(scales, run + 1),
        );
        total = _mm256_add_epi32(total, _mm256_add_epi32(first, second));
    }
    total
}

/// A K block's product, once its scaled runs are summed: into `acc`, and its minimums' part
/// into `offsets`.
#[target_feature(enable = "avx2,fma,f16c")]
fn k_block(
    (d, dmin): ([u8; 2], [u8; 2]),
    y: &BlockQ8K,
    mins: __m128i,
    runs: __m256i,
    acc: &mut __m256,
    offsets: &mut __m128,
) {
    *acc = _mm256_fmadd_ps(_mm256_set1_ps(half(d) * y.d), float(runs), *acc);
    let minimums = _mm_cvtepi32_ps(minimums(mins, y));
    *offsets = _mm_fmadd_ps(_mm_set1_ps(half(dmin) * y.d), minimums, *offsets);
}

/// The sum of the 4 lanes of `v`.
#[target_feature(enable = "avx2,fma,f16c")]
fn sum4(v: __m128) -> f32 {
    let pairs = _mm_add_ps(v, _mm_movehl_ps(v, v));
    _mm_cvtss_f32(_mm_add_ss(pairs, _mm_movehdup_ps(pairs)))
}

#[target_feature(enable = "avx2,fma,f16c")]
fn dot_q4k(row: &[BlockQ4K], x: &[BlockQ8K]) -> f32 {
    let low_nibble = _mm256_set1_epi8(0x0F);
    let (mut acc, mut offsets) = (_mm256_setzero_ps(), _mm_setzero_ps());
    for (i, (w, y)) in row.iter().zip(x).enumerate() {
        prefetch(row, i);
        let both = widened(scales_and_mins(&w.scales));
        let scales = _mm256_permute2x128_si256::<0x00>(both, both);
        let runs = scaled_runs(scales, y, |pair| {
            // SAFETY: reads 32 of the 128 bytes of the array (an unaligned load).
            let packed = unsafe { _mm256_loadu_si256(w.qs[32 * pair..].as_ptr().cast()) };
            [
                _mm256_and_si256(packed, low_nibble),
                _mm256_and_si256(_mm256_srli_epi16::<4>(packed), low_nibble),
            ]
        });
        let mins = _mm256_extracti128_si256::<1>(both);
        k_block((w.d, w.dmin), y, mins, runs, &mut acc, &mut offsets);
    }
    sum(acc) - sum4(offsets)
}

#[target_feature(enable = "avx2,fma,f16c")]
fn dot_q5k(row: &[BlockQ5K], x: &[BlockQ8K]) -> f32 {
    let (low_nibble, one) = (_mm256_set1_epi8(0x0F), _mm256_set1_epi8(1));
    let (mut acc, mut offsets) = (_mm256_setzero_ps(), _mm_setzero_ps());
    for (i, (w, y)) in row.iter().zip(x).enumerate() {
        prefetch(row, i);
        let both = widened(scales_and_mins(&w.scales));
        let scales = _mm256_permute2x128_si256::<0x00>(both, both);
        // SAFETY: reads exactly the 32-byte array (an unaligned load).
        let high = unsafe { _mm256_loadu_si256(w.qh.as_ptr().cast()) };
        // Bit j of each byte of `qh`, moved to 0x10: the fifth bit of run j's codes.
        let fifth = |j: usize| {
            let shift = _mm_cvtsi32_si128(i32::try_from(j).unwrap_or_default());
            let bit = _mm256_and_si256(_mm256_srl_epi16(high, shift), one);
            _mm256_slli_epi16::<4>(bit)
        };
        let runs = scaled_runs(scales, y, |pair| {
            // SAFETY: reads 32 of the 128 bytes of the array (an unaligned load).
            let packed = unsafe { _mm256_loadu_si256(w.qs[32 * pair..].as_ptr().cast()) };
            [
                _mm256_or_si256(_mm256_and_si256(packed, low_nibble), fifth(2 * pair)),
                _mm256_or_si256(
                    _mm256_and_si256(_mm256_srli_epi16::<4>(packed), low_nibble),
                    fifth(2 * pair + 1),
                ),
            ]
        });
        let mins = _mm256_extracti128_si256::<1>(both);
        k_block((w.d, w.dmin), y, mins, runs, &mut acc, &mut offsets);
    }
    sum(acc) - sum4(offsets)
}

#[target_feature(enable = "avx2,fma,f16c")]
fn dot_q6k<const N: usize>(row: &[BlockQ6K], xs: [&[BlockQ8K]; N]) -> [f32; N] {
    let (low_nibble, two_bits) = (_mm256_set1_epi8(0x0F), _mm256_set1_epi8(3));
    let mut acc = [_mm256_setzero_ps(); N];
    for (i, w) in row.iter().enumerate() {
        prefetch(row, i);
        // SAFETY: reads exactly the 16 one-byte scales (an unaligned load).
        let all_scales = unsafe { _mm_loadu_si128(w.scales.as_ptr().cast()) };
        let mut runs = [_mm256_setzero_si256(); N];
        for half_block in 0..2 {
            // SAFETY: each load reads 32 bytes inside its array (unaligned loads).
            let (ql, qh) = unsafe {
                (
                    [
                        _mm256_loadu_si256(w.ql[64 * half_block..].as_ptr().cast()),
                        _mm256_loadu_si256(w.ql[64 * half_block + 32..].as_ptr().cast()),
                    ],
                    _mm256_loadu_si256(w.qh[32 * half_block..].as_ptr().cast()),
                )
            };
            for run in 0..4 {
                let k = 4 * half_block + run;
                let low = if run < 2 {
                    _mm256_and_si256(ql[run], low_nibble)
                } else {
                    _mm256_and_si256(_mm256_srli_epi16::<4>(ql[run - 2]), low_nibble)
                };
                let shift = _mm_cvtsi32_si128(i32::try_from(2 * run).unwrap_or_default());
                let high = _mm256_and_si256(_mm256_srl_epi16(qh, shift), two_bits);
                let codes = _mm256_or_si256(low, _mm256_slli_epi16::<4>(high));
                // The first 16 values take scale 2k, the next 16 scale 2k + 1.
                let pick = _mm_set_epi64x(
                    i64::from_le_bytes([2 * k as u8 + 1; 8]),
                    i64::from_le_bytes([2 * k as u8; 8]),
                );
                let scales = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(all_scales, pick));
                for (runs, y) in runs.iter_mut().zip(&xs) {
                    // Σ code × y, each pair of values in 16 bits (the 32 the codes are offset
                    // by is taken off once per block, below).
                    let pairs = _mm256_maddubs_epi16(codes, codes_at(&y[i], 32 * k));
                    *runs = _mm256_add_epi32(*runs, _mm256_madd_epi16(pairs, scales));
                }
            }
        }
        for ((acc, runs), y) in acc.iter_mut().zip(runs).zip(&xs) {
            let y = &y[i];
            // Σ scale × 32 × Σ y over the sixteen runs of 16: the codes' offset, in 8 lanes.
            // SAFETY: reads exactly the 16 two-byte sums (an unaligned load).
            let run_sums = unsafe { _mm256_loadu_si256(y.sums.as_ptr().cast()) };
            let offsets = _mm256_madd_epi16(_mm256_cvtepi8_epi16(all_scales), run_sums);
            let runs = _mm256_sub_epi32(runs, _mm256_slli_epi32::<5>(offsets));
            *acc = _mm256_fmadd_ps(_mm256_set1_ps(half(w.d) * y.d), float(runs), *acc);
        }
    }
    acc.map(|acc| sum(acc))
}

/// Asks for the bytes `PREFETCH_DISTANCE` past block `i` of `row`, every cache line of a
/// block's size (the rows of a matrix follow each other, so this is what the next blocks will
/// read). Without it, decoding waits on the weights arriving from memory for half of its time.
#[target_feature(enable = "avx2,fma,f16c")]
fn prefetch<B>(row: &[B], i: usize) {
    prefetch_ahead::<B, _MM_HINT_T0>(row, i, PREFETCH_DISTANCE);
}

/// Asks for every cache line of block `i` of `blocks`, `ahead` bytes further on, into the
/// cache that `HINT` names.
#[target_feature(enable = "avx2,fma,f16c")]
fn prefetch_ahead<B, const HINT: i32>(blocks: &[B], i: usize, ahead: usize) {
    let block = blocks.as_ptr().wrapping_add(i).cast::<i8>().wrapping_add(ahead);
    for line in (0..size_of::<B>()).step_by(64) {
        _mm_prefetch::<HINT>(block.wrapping_add(line));
    }
}

/// An f16 stored as two little-endian bytes, as f32.
#[target_feature(enable = "avx2,fma,f16c")]
fn half(bytes: [u8; 2]) -> f32 {
    _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(i32::from(u16::from_le_bytes(bytes)))))
}

#[target_feature(enable = "avx2,fma,f16c")]
fn float(v: __m256i) -> __m256 {
    _mm256_cvtepi32_ps(v)
}

#[target_feature(enable = "avx2,fma,f16c")]
fn sum(v: __m256) -> f32 {
    let halves = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let pairs = _mm_add_ps(halves, _mm_movehl_ps(halves, halves));
    _mm_cvtss_f32(_mm_add_ss(pairs, _mm_movehdup_ps(pairs)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_and_mins_unpack_as_one_by_one() {
        let mut state = 1u32;
        for _ in 0..200 {
            let packed: [u8; 12] = std::array::from_fn(|_| {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (state >> 24) as u8
            });
            let words = scales_and_mins(&packed);
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            for j in 0..8 {
                assert_eq!(
                    (bytes[j], bytes[8 + j]),
                    scale_and_min(&packed, j),
                    "{packed:?}, run {j}"
                );
            }
        }
    }
}
