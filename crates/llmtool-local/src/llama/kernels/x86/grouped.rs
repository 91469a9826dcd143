//! The AVX2 kernels for rows regrouped by eight (see `repack/`): each 32-bit lane is one row's
//! sum, each activation word is broadcast to all eight rows, and a group's blocks are read
//! once for two tokens at a time (four would spill registers: the Q4_K kernel ran at half the
//! speed).

use std::arch::x86_64::{
    __m256, __m256i, _MM_HINT_T0, _mm_hadd_epi16, _mm_loadu_si128, _mm_prefetch, _mm_set_epi64x,
    _mm_storeu_si128, _mm256_add_epi16, _mm256_add_epi32, _mm256_and_si256, _mm256_castsi256_si128,
    _mm256_cvtepu8_epi16, _mm256_cvtepu8_epi32, _mm256_cvtph_ps, _mm256_extracti128_si256,
    _mm256_fmadd_ps, _mm256_loadu_si256, _mm256_madd_epi16, _mm256_maddubs_epi16, _mm256_mul_ps,
    _mm256_or_si256, _mm256_set1_epi8, _mm256_set1_epi16, _mm256_set1_epi32, _mm256_set1_ps,
    _mm256_setzero_ps, _mm256_setzero_si256, _mm256_sign_epi8, _mm256_slli_epi16,
    _mm256_slli_epi32, _mm256_srli_epi16, _mm256_storeu_ps, _mm256_sub_ps,
};

use super::{PREFETCH_DISTANCE, float, prefetch};
use crate::llama::blocks::{BlockQ8, BlockQ8K};
use crate::llama::kernels::{Activation, Range, Target};
use crate::llama::repack::{
    BlockQ4_0x8, BlockQ4_1x8, BlockQ4Kx8, BlockQ5_0x8, BlockQ5_1x8, BlockQ8_0x8, ROWS,
};

/// Every product of `rows` of a regrouped part, whose groups are `per_row` blocks `blocks`
/// each, with every token of `xs`: `one` and `two` multiply a group with one token or two. A
/// group only partly asked for is computed whole and written in part.
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn in_groups<W, X: Activation>(
    blocks: &[W],
    xs: &[X],
    rows: Range<usize>,
    target: &Target<'_>,
    out: &mut [f32],
    one: impl Fn(&[W], [&[X]; 1]) -> [__m256; 1],
    two: impl Fn(&[W], [&[X]; 2]) -> [__m256; 2],
) {
    let (per_row, tokens) = (target.xs.width / X::VALUES, target.xs.tokens());
    // The form of the activations these kernels take was quantized (`Matrix::forms`).
    debug_assert_eq!(xs.len(), tokens * per_row);
    for group in rows.start / ROWS..rows.end.div_ceil(ROWS) {
        let weights = &blocks[group * per_row..][..per_row];
        let token = |t: usize| &xs[t * per_row..][..per_row];
        let mut t = 0;
        while t + 2 <= tokens {
            store(two(weights, [token(t), token(t + 1)]), group, t, &rows, target, out);
            t += 2;
        }
        for t in t..tokens {
            store(one(weights, [token(t)]), group, t, &rows, target, out);
        }
    }
}

/// Writes the sums of `group`'s eight rows with tokens `first..` (one vector a token) where
/// they go in `out`: the rows of `rows` only.
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn store<const N: usize>(
    sums: [__m256; N],
    group: usize,
    first: usize,
    rows: &Range<usize>,
    target: &Target<'_>,
    out: &mut [f32],
) {
    let whole = rows.start <= ROWS * group && ROWS * (group + 1) <= rows.end;
    for (t, sums) in sums.into_iter().enumerate() {
        let at = (first + t) * target.width + target.at;
        if whole {
            // The group's eight rows are all asked for: they go in one store.
            let place = &mut out[at + ROWS * group - rows.start..][..ROWS];
            // SAFETY: stores 8 floats into a slice of 8 (an unaligned store).
            unsafe { _mm256_storeu_ps(place.as_mut_ptr(), sums) };
            continue;
        }
        let mut values = [0.0f32; ROWS];
        // SAFETY: stores 8 floats into an array of 8 (an unaligned store).
        unsafe { _mm256_storeu_ps(values.as_mut_ptr(), sums) };
        for (r, value) in values.into_iter().enumerate() {
            let row = ROWS * group + r;
            if rows.contains(&row) {
                out[at + row - rows.start] = value;
            }
        }
    }
}

/// The products of eight regrouped rows of a 32-value format (a group's blocks) with `N`
/// tokens' activations, one row per lane. `codes(w, k)` gives chunk `k`'s codes (0 to 3):
/// codes `4k..4k + 4` of each row, then codes `16 + 4k..`; `SIGNED` says whether they are
/// signed (else below 32); `offsets(w, d)` what each row's block adds per unit of an
/// activation block's sum, given the rows' scales `d`.
#[target_feature(enable = "avx2,fma,f16c")]
fn rows_of_blocks<W, const N: usize, const SIGNED: bool>(
    weights: &[W],
    ys: [&[BlockQ8]; N],
    scales: impl Fn(&W) -> __m256,
    offsets: impl Fn(&W, __m256) -> __m256,
    codes: impl Fn(&W, usize) -> [__m256i; 2],
) -> [__m256; N] {
    let ones = _mm256_set1_epi16(1);
    let mut acc = [_mm256_setzero_ps(); N];
    for (i, w) in weights.iter().enumerate() {
        prefetch(weights, i);
        let mut sums = [_mm256_setzero_si256(); N];
        if SIGNED {
            // maddubs multiplies unsigned by signed bytes: the codes' signs move onto the
            // activations, and each product of 2 × 128 × 127 at most is widened at once.
            for k in 0..4 {
                let [low, high] = codes(w, k);
                let (low_size, high_size) =
                    (_mm256_sign_epi8(low, low), _mm256_sign_epi8(high, high));
                for t in 0..N {
                    let y = &ys[t][i].qs;
                    let a = _mm256_maddubs_epi16(low_size, _mm256_sign_epi8(word(y, 4 * k), low));
                    let b = _mm256_maddubs_epi16(
                        high_size,
                        _mm256_sign_epi8(word(y, 16 + 4 * k), high),
                    );
                    let both =
                        _mm256_add_epi32(_mm256_madd_epi16(a, ones), _mm256_madd_epi16(b, ones));
                    sums[t] = _mm256_add_epi32(sums[t], both);
                }
            }
        } else {
            // Four products of codes below 32 sum to 4 × 2 × 31 × 127 at most in 16 bits.
            let mut low = [_mm256_setzero_si256(); N];
            let mut high = [_mm256_setzero_si256(); N];
            for k in 0..4 {
                let [first, second] = codes(w, k);
                for t in 0..N {
                    let y = &ys[t][i].qs;
                    low[t] = _mm256_add_epi16(low[t], _mm256_maddubs_epi16(first, word(y, 4 * k)));
                    high[t] = _mm256_add_epi16(
                        high[t],
                        _mm256_maddubs_epi16(second, word(y, 16 + 4 * k)),
                    );
                }
            }
            for t in 0..N {
                sums[t] = _mm256_add_epi32(
                    _mm256_madd_epi16(low[t], ones),
                    _mm256_madd_epi16(high[t], ones),
                );
            }
        }
        let d = scales(w);
        let offset = offsets(w, d);
        for t in 0..N {
            let y = &ys[t][i];
            let products =
                _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(y.d)), float(sums[t]), acc[t]);
            acc[t] = _mm256_fmadd_ps(offset, _mm256_set1_ps(y.sum), products);
        }
    }
    acc
}

/// Eight f16 values as f32.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn halves(values: &[[u8; 2]; ROWS]) -> __m256 {
    // SAFETY: reads exactly the 16 bytes of the array (an unaligned load).
    _mm256_cvtph_ps(unsafe { _mm_loadu_si128(values.as_ptr().cast()) })
}

/// Chunk `k` of interleaved 4-bit codes: its low nibbles (codes `4k..` of each row) and its
/// high nibbles (codes `16 + 4k..`).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn nibble_chunk(qs: &[u8; 128], k: usize) -> [__m256i; 2] {
    // SAFETY: reads bytes 32k..32k + 32 of the 128 (k < 4; an unaligned load).
    let packed = unsafe { _mm256_loadu_si256(qs[32 * k..][..32].as_ptr().cast()) };
    let low_nibble = _mm256_set1_epi8(0x0F);
    [
        _mm256_and_si256(packed, low_nibble),
        _mm256_and_si256(_mm256_srli_epi16::<4>(packed), low_nibble),
    ]
}

/// [`nibble_chunk`] with each code's fifth bit from a fifth-bit plane (see `BlockQ5_0x8`):
/// bit `k` of each byte for the low nibbles, bit `4 + k` for the high ones, each moved to
/// bit 4. The 16-bit shifts move bits across bytes, but bit 4 of each byte only ever comes
/// from its own byte.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn five_bit_chunk(qs: &[u8; 128], high: &[u8; 32], k: usize) -> [__m256i; 2] {
    let [low, top] = nibble_chunk(qs, k);
    // SAFETY: reads exactly the 32 bytes of the plane (an unaligned load).
    let plane = unsafe { _mm256_loadu_si256(high.as_ptr().cast()) };
    let bit = |v: __m256i| _mm256_and_si256(v, _mm256_set1_epi8(0x10));
    let (low_bits, high_bits) = match k {
        0 => (_mm256_slli_epi16::<4>(plane), plane),
        1 => (_mm256_slli_epi16::<3>(plane), _mm256_srli_epi16::<1>(plane)),
        2 => (_mm256_slli_epi16::<2>(plane), _mm256_srli_epi16::<2>(plane)),
        _ => (_mm256_slli_epi16::<1>(plane), _mm256_srli_epi16::<3>(plane)),
    };
    [_mm256_or_si256(low, bit(low_bits)), _mm256_or_si256(top, bit(high_bits))]
}

/// Chunks `k` and `k + 4` of a Q8_0 group's codes: codes `4k..` and `16 + 4k..` of each row.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn byte_chunks(qs: &[i8; 256], k: usize) -> [__m256i; 2] {
    // SAFETY: reads bytes 32k.. and 32(k + 4).., 32 each, of the 256 (k < 4; unaligned loads).
    unsafe {
        [
            _mm256_loadu_si256(qs[32 * k..][..32].as_ptr().cast()),
            _mm256_loadu_si256(qs[32 * (k + 4)..][..32].as_ptr().cast()),
        ]
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn q4_0_rows<const N: usize>(w: &[BlockQ4_0x8], ys: [&[BlockQ8]; N]) -> [__m256; N] {
    let offsets = |_: &BlockQ4_0x8, d| _mm256_mul_ps(d, _mm256_set1_ps(-8.0));
    rows_of_blocks::<_, N, false>(w, ys, |w| halves(&w.d), offsets, |w, k| nibble_chunk(&w.qs, k))
}

#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn q4_1_rows<const N: usize>(w: &[BlockQ4_1x8], ys: [&[BlockQ8]; N]) -> [__m256; N] {
    let offsets = |w: &BlockQ4_1x8, _| halves(&w.m);
    rows_of_blocks::<_, N, false>(w, ys, |w| halves(&w.d), offsets, |w, k| nibble_chunk(&w.qs, k))
}

#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn q5_0_rows<const N: usize>(w: &[BlockQ5_0x8], ys: [&[BlockQ8]; N]) -> [__m256; N] {
    let offsets = |_: &BlockQ5_0x8, d| _mm256_mul_ps(d, _mm256_set1_ps(-16.0));
    let codes = |w: &BlockQ5_0x8, k| five_bit_chunk(&w.qs, &w.high, k);
    rows_of_blocks::<_, N, false>(w, ys, |w| halves(&w.d), offsets, codes)
}

#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn q5_1_rows<const N: usize>(w: &[BlockQ5_1x8], ys: [&[BlockQ8]; N]) -> [__m256; N] {
    let offsets = |w: &BlockQ5_1x8, _| halves(&w.m);
    let codes = |w: &BlockQ5_1x8, k| five_bit_chunk(&w.qs, &w.high, k);
    rows_of_blocks::<_, N, false>(w, ys, |w| halves(&w.d), offsets, codes)
}

#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn q8_0_rows<const N: usize>(w: &[BlockQ8_0x8], ys: [&[BlockQ8]; N]) -> [__m256; N] {
    let offsets = |_: &BlockQ8_0x8, _| _mm256_setzero_ps();
    rows_of_blocks::<_, N, true>(w, ys, |w| halves(&w.d), offsets, |w, k| byte_chunks(&w.qs, k))
}

/// The products of eight regrouped Q4_K rows (a group's super-blocks) with `N` tokens'
/// activations, one row per lane.
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn q4k_rows<const N: usize>(
    weights: &[BlockQ4Kx8],
    ys: [&[BlockQ8K]; N],
) -> [__m256; N] {
    let low_nibble = _mm256_set1_epi8(0x0F);
    let mut acc = [_mm256_setzero_ps(); N];
    let mut offsets = [_mm256_setzero_ps(); N];
    for (s, w) in weights.iter().enumerate() {
        let mut sums = [_mm256_setzero_si256(); N];
        for pair in 0..4 {
            // Runs 2 × pair (low nibbles) and 2 × pair + 1 (high nibbles), 16-bit sums of
            // products for each row: at most 8 × 2 × 15 × 128 in size, so they cannot overflow.
            let mut low = [_mm256_setzero_si256(); N];
            let mut high = [_mm256_setzero_si256(); N];
            for k in 0..8 {
                let chunk = 8 * pair + k;
                // SAFETY: reads chunk `chunk` (32 of the 1,024 bytes) of the codes.
                let packed = unsafe { _mm256_loadu_si256(w.qs[32 * chunk..].as_ptr().cast()) };
                if k % 2 == 0 {
                    prefetch_bytes(w.qs[32 * chunk..].as_ptr());
                }
                let first = _mm256_and_si256(packed, low_nibble);
                let second = _mm256_and_si256(_mm256_srli_epi16::<4>(packed), low_nibble);
                for t in 0..N {
                    let y = &ys[t][s];
                    let at = 64 * pair + 4 * k;
                    let (a, b) = (word(&y.qs, at), word(&y.qs, at + 32));
                    low[t] = _mm256_add_epi16(low[t], _mm256_maddubs_epi16(first, a));
                    high[t] = _mm256_add_epi16(high[t], _mm256_maddubs_epi16(second, b));
                }
            }
            let (first, second) = (paired(w.scales[2 * pair]), paired(w.scales[2 * pair + 1]));
            for t in 0..N {
                let scaled = _mm256_add_epi32(
                    _mm256_madd_epi16(low[t], first),
                    _mm256_madd_epi16(high[t], second),
                );
                sums[t] = _mm256_add_epi32(sums[t], scaled);
            }
        }
        // SAFETY: reads the 16 bytes of eight f16 scales, twice (unaligned loads).
        let d = _mm256_cvtph_ps(unsafe { _mm_loadu_si128(w.d.as_ptr().cast()) });
        let dmin = _mm256_cvtph_ps(unsafe { _mm_loadu_si128(w.dmin.as_ptr().cast()) });
        for t in 0..N {
            let y = &ys[t][s];
            let yd = _mm256_set1_ps(y.d);
            acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(d, yd), float(sums[t]), acc[t]);
            let minimums = float(group_minimums(w, y));
            offsets[t] = _mm256_fmadd_ps(_mm256_mul_ps(dmin, yd), minimums, offsets[t]);
        }
    }
    std::array::from_fn(|t| _mm256_sub_ps(acc[t], offsets[t]))
}

/// Σ minimum × codes over the eight runs of a super-block, for each of the eight rows: each
/// row's minimums of a pair of runs against the pair's sums of codes.
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn group_minimums(w: &BlockQ4Kx8, y: &BlockQ8K) -> __m256i {
    // SAFETY: reads exactly the 16 two-byte sums (an unaligned load).
    let sums = unsafe { _mm256_loadu_si256(y.sums.as_ptr().cast()) };
    let per_run = _mm_hadd_epi16(_mm256_castsi256_si128(sums), _mm256_extracti128_si256::<1>(sums));
    let mut pairs = [0i32; 4];
    // SAFETY: stores 16 bytes into an array of 16 (an unaligned store).
    unsafe { _mm_storeu_si128(pairs.as_mut_ptr().cast(), per_run) };
    let mut total = _mm256_setzero_si256();
    for (pair, sums) in pairs.into_iter().enumerate() {
        // SAFETY: reads the 16 bytes of this pair's minimums (an unaligned load).
        let mins = _mm256_cvtepu8_epi16(unsafe { _mm_loadu_si128(w.mins[pair].as_ptr().cast()) });
        total = _mm256_add_epi32(total, _mm256_madd_epi16(mins, _mm256_set1_epi32(sums)));
    }
    total
}

/// Eight 6-bit scales as 32-bit lanes holding each twice (as 16-bit halves), for
/// `_mm256_madd_epi16` against pairs of 16-bit sums.
#[target_feature(enable = "avx2,fma,f16c")]
fn paired(scales: [u8; 8]) -> __m256i {
    let wide = _mm256_cvtepu8_epi32(_mm_set_epi64x(0, i64::from_le_bytes(scales)));
    _mm256_or_si256(wide, _mm256_slli_epi32::<16>(wide))
}

/// Activation codes `at..at + 4` (`at` a multiple of 4, below `L`) as one word in every
/// 32-bit lane.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) fn word<const L: usize>(codes: &[i8; L], at: usize) -> __m256i {
    debug_assert!(at.is_multiple_of(4) && at < L);
    // SAFETY: reads 4 of the `L` bytes (`at` ≤ L − 4; an unaligned read).
    _mm256_set1_epi32(unsafe { codes.as_ptr().add(at).cast::<i32>().read_unaligned() })
}

/// Asks for the bytes `PREFETCH_DISTANCE` past `at`.
#[target_feature(enable = "avx2,fma,f16c")]
fn prefetch_bytes(at: *const u8) {
    _mm_prefetch::<_MM_HINT_T0>(at.cast::<i8>().wrapping_add(PREFETCH_DISTANCE));
}
