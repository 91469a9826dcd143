//! The VNNI kernels for regrouped Q4_K and Q6_K rows (see `vnni.rs` for the instruction, and
//! for how groups and tokens are taken together). In Q6_K, a run of sixteen values of eight rows is unpacked
//! into four chunks of unsigned codes (0 to 63) once for all the tokens; each token's four
//! `vpdpbusd` sum the run, which is scaled by the rows' run scales in floats. The codes'
//! offset of 32 is taken off once a super-block: 32 × Σ scale × Σ activations, the sums of
//! each run's activations being kept with them (`BlockQ8K::sums`).

use std::arch::x86_64::{
    __m256, __m256i, _mm_loadu_si128, _mm_set_epi64x, _mm256_add_epi32, _mm256_and_si256,
    _mm256_cvtepi8_epi16, _mm256_cvtepi32_ps, _mm256_cvtepu8_epi32, _mm256_dpbusd_epi32,
    _mm256_fmadd_ps, _mm256_fnmadd_ps, _mm256_loadu_si256, _mm256_madd_epi16, _mm256_mul_ps,
    _mm256_mullo_epi32, _mm256_or_si256, _mm256_set1_epi8, _mm256_set1_ps, _mm256_setzero_ps,
    _mm256_setzero_si256, _mm256_slli_epi16, _mm256_slli_epi32, _mm256_srai_epi32,
    _mm256_srli_epi16, _mm256_sub_ps,
};

use super::float;
use super::grouped::{group_minimums, halves, store, word};
use super::vnni::{prefetch_groups, tiled};
use crate::llama::blocks::{BlockQ8K, SUPER};
use crate::llama::kernels::{Range, Target};
use crate::llama::repack::{BlockQ4Kx8, BlockQ6Kx8, ROWS};

/// A kernel for every product of `rows` of a regrouped K-format part, whose blocks are
/// `blocks`, with every token of the target's activations: `$rows::<G, N>` multiplies `G`
/// groups with `N` tokens.
macro_rules! kernel {
    ($name:ident, $block:ty, $rows:ident) => {
        #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512vl,avx512vnni")]
        pub(super) fn $name(
            blocks: &[$block],
            rows: Range<usize>,
            target: &Target<'_>,
            out: &mut [f32],
        ) {
            let xs = target.xs.supers;
            let (per_row, tokens) = (target.xs.width / SUPER, target.xs.tokens());
            // The form of the activations this kernel takes was quantized (`Matrix::forms`).
            debug_assert_eq!(xs.len(), tokens * per_row);
            let group_of = |g: usize| &blocks[g * per_row..][..per_row];
            let token = |t: usize| &xs[t * per_row..][..per_row];
            // Multiplies `$g` groups from `group` with `$n` tokens from `t`: how many tokens.
            macro_rules! run {
                ($group:expr, $t:expr, $g:literal, $n:literal) => {{
                    let sums = $rows::<$g, $n>(
                        std::array::from_fn(|g| group_of($group + g)),
                        std::array::from_fn(|i| token($t + i)),
                    );
                    for (g, sums) in sums.into_iter().enumerate() {
                        store(sums, $group + g, $t, &rows, target, out);
                    }
                    $n
                }};
            }
            tiled!(rows, tokens, run);
        }
    };
}

kernel!(q4k, BlockQ4Kx8, q4k_rows);
kernel!(q6k, BlockQ6Kx8, q6k_rows);

/// The products of `G` groups of eight regrouped Q4_K rows with `N` tokens' activations, one
/// row per lane. A chunk holds the same four codes of a pair of runs (of 32), in its low and
/// high nibbles. Each run is summed on its own and multiplied by its rows' scales as integers,
/// so that a super-block's sum is the exact integer the AVX2 kernel (`grouped::q4k_rows`)
/// gets, and then scaled by the same float operations: both kernels give a token the same
/// numbers, bit for bit, and one token alone goes through the AVX2 kernel, which streams the
/// weights from memory faster. The sums of a pair of runs fit in registers for up to four
/// groups × tokens: each chunk is then read once for both runs; beyond, one run of the pair
/// after the other, each chunk read twice.
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512vl,avx512vnni")]
fn q4k_rows<const G: usize, const N: usize>(
    groups: [&[BlockQ4Kx8]; G],
    ys: [&[BlockQ8K]; N],
) -> [[__m256; N]; G] {
    let nibble = _mm256_set1_epi8(0x0F);
    let together = G * N <= 4;
    let mut acc = [[_mm256_setzero_ps(); N]; G];
    let mut offsets = [[_mm256_setzero_ps(); N]; G];
    for i in 0..groups[0].len() {
        prefetch_groups::<BlockQ4Kx8, G, N>(groups, i);
        // Σ scale × Σ code × activation over the runs, exactly.
        let mut totals = [[_mm256_setzero_si256(); N]; G];
        // Both runs of a pair in each pass, or one run a pass.
        let per_pass = if together { 2 } else { 1 };
        for pass in 0..SUPER / 32 / per_pass {
            // This pass sums runs `first..first + per_pass`, of the pair `pair`.
            let first = pass * per_pass;
            let (pair, high) = (first / 2, first % 2 == 1);
            let mut sums = [[[_mm256_setzero_si256(); N]; G]; 2];
            for k in 0..8 {
                let chunk = 8 * pair + k;
                // Loops, not `array::from_fn`: its closure was not always inlined here.
                let mut codes = [[_mm256_setzero_si256(); G]; 2];
                for g in 0..G {
                    let qs = &groups[g][i].qs;
                    // SAFETY: reads chunk `chunk` (32 of the 1,024 bytes) of the codes.
                    let packed = unsafe { _mm256_loadu_si256(qs[32 * chunk..].as_ptr().cast()) };
                    let low = _mm256_and_si256(packed, nibble);
                    let top = _mm256_and_si256(_mm256_srli_epi16::<4>(packed), nibble);
                    codes[0][g] = if high { top } else { low };
                    codes[1][g] = top;
                }
                for t in 0..N {
                    for r in 0..per_pass {
                        let y = word(&ys[t][i].qs, 32 * (first + r) + 4 * k);
                        for g in 0..G {
                            sums[r][g][t] = _mm256_dpbusd_epi32(sums[r][g][t], codes[r][g], y);
                        }
                    }
                }
            }
            for (r, sums) in sums.iter().enumerate().take(per_pass) {
                for g in 0..G {
                    let scales = i64::from_le_bytes(groups[g][i].scales[first + r]);
                    let scales = _mm256_cvtepu8_epi32(_mm_set_epi64x(0, scales));
                    for t in 0..N {
                        let product = _mm256_mullo_epi32(sums[g][t], scales);
                        totals[g][t] = _mm256_add_epi32(totals[g][t], product);
                    }
                }
            }
        }
        // As the AVX2 kernel does, operation for operation.
        for g in 0..G {
            let w = &groups[g][i];
            let (d, dmin) = (halves(&w.d), halves(&w.dmin));
            for t in 0..N {
                let y = &ys[t][i];
                let yd = _mm256_set1_ps(y.d);
                acc[g][t] = _mm256_fmadd_ps(_mm256_mul_ps(d, yd), float(totals[g][t]), acc[g][t]);
                let minimums = float(group_minimums(w, y));
                offsets[g][t] = _mm256_fmadd_ps(_mm256_mul_ps(dmin, yd), minimums, offsets[g][t]);
            }
        }
    }
    std::array::from_fn(|g| std::array::from_fn(|t| _mm256_sub_ps(acc[g][t], offsets[g][t])))
}

/// The products of `G` groups of eight regrouped Q6_K rows with `N` tokens' activations, one
/// row per lane.
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512vl,avx512vnni")]
fn q6k_rows<const G: usize, const N: usize>(
    groups: [&[BlockQ6Kx8]; G],
    ys: [&[BlockQ8K]; N],
) -> [[__m256; N]; G] {
    let mut acc = [[_mm256_setzero_ps(); N]; G];
    for i in 0..groups[0].len() {
        prefetch_groups::<BlockQ6Kx8, G, N>(groups, i);
        // Σ scale × Σ code × activation over the runs, in floats (each run's sum is exact).
        let mut weighted = [[_mm256_setzero_ps(); N]; G];
        for run in 0..SUPER / 16 {
            // Loops, not `array::from_fn`: its closure was not always inlined here.
            let mut chunks = [[_mm256_setzero_si256(); 4]; G];
            let mut scales = [_mm256_setzero_ps(); G];
            for g in 0..G {
                chunks[g] = run_codes(&groups[g][i], run);
                scales[g] = run_scales(&groups[g][i], run);
            }
            for t in 0..N {
                let y = &ys[t][i].qs;
                let words: [__m256i; 4] = std::array::from_fn(|c| word(y, 16 * run + 4 * c));
                for g in 0..G {
                    let mut sum = _mm256_setzero_si256();
                    for c in 0..4 {
                        sum = _mm256_dpbusd_epi32(sum, chunks[g][c], words[c]);
                    }
                    weighted[g][t] = _mm256_fmadd_ps(scales[g], float(sum), weighted[g][t]);
                }
            }
        }
        for g in 0..G {
            let w = &groups[g][i];
            let d = halves(&w.d);
            for t in 0..N {
                let y = &ys[t][i];
                // The codes are offset by 32: take 32 × Σ scale × Σ activations off.
                let offset = _mm256_cvtepi32_ps(scaled_sums(w, y));
                let total = _mm256_fnmadd_ps(_mm256_set1_ps(32.0), offset, weighted[g][t]);
                let dd = _mm256_mul_ps(d, _mm256_set1_ps(y.d));
                acc[g][t] = _mm256_fmadd_ps(dd, total, acc[g][t]);
            }
        }
    }
    acc
}

/// Run `run`'s four chunks of codes (0 to 63): chunk `c` is values `4c..4c + 4` of each row.
/// The 16-bit shifts move bits across bytes, but each mask keeps only bits that came from
/// their own byte.
#[inline]
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512vl,avx512vnni")]
fn run_codes(w: &BlockQ6Kx8, run: usize) -> [__m256i; 4] {
    let piece = &w.runs[run];
    // SAFETY: each load reads exactly one 32-byte array (unaligned loads).
    let (first, second, high) = unsafe {
        (
            _mm256_loadu_si256(piece.low[0].as_ptr().cast()),
            _mm256_loadu_si256(piece.low[1].as_ptr().cast()),
            _mm256_loadu_si256(piece.high.as_ptr().cast()),
        )
    };
    let (nibble, top) = (_mm256_set1_epi8(0x0F), _mm256_set1_epi8(0x30));
    let codes = |low: __m256i, high: __m256i| {
        _mm256_or_si256(_mm256_and_si256(low, nibble), _mm256_and_si256(high, top))
    };
    [
        codes(first, _mm256_slli_epi16::<4>(high)),
        codes(second, _mm256_slli_epi16::<2>(high)),
        codes(_mm256_srli_epi16::<4>(first), high),
        codes(_mm256_srli_epi16::<4>(second), _mm256_srli_epi16::<2>(high)),
    ]
}

/// The eight rows' scales of run `run`, as floats.
#[inline]
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512vl,avx512vnni")]
fn run_scales(w: &BlockQ6Kx8, run: usize) -> __m256 {
    // Each 32-bit lane holds a row's scales of the pair of runs, as two 16-bit halves.
    let pair = scale_pairs(w, run / 2);
    let lane = if run.is_multiple_of(2) {
        _mm256_srai_epi32::<16>(_mm256_slli_epi32::<16>(pair))
    } else {
        _mm256_srai_epi32::<16>(pair)
    };
    _mm256_cvtepi32_ps(lane)
}

/// The scales of runs `2 × pair` and `2 × pair + 1` of each row, as 16-bit halves of its
/// 32-bit lane.
#[inline]
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512vl,avx512vnni")]
fn scale_pairs(w: &BlockQ6Kx8, pair: usize) -> __m256i {
    // SAFETY: reads exactly the 16 bytes of the pair's scales (an unaligned load).
    _mm256_cvtepi8_epi16(unsafe { _mm_loadu_si128(w.scales[pair].as_ptr().cast()) })
}

/// Σ scale × Σ activations over the sixteen runs, for each row.
#[inline]
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512vl,avx512vnni")]
fn scaled_sums(w: &BlockQ6Kx8, y: &BlockQ8K) -> __m256i {
    let mut total = _mm256_setzero_si256();
    for pair in 0..SUPER / 32 {
        // The two runs' sums of activations, as one word in every lane.
        let sums = std::arch::x86_64::_mm256_set1_epi32(i32::from_le_bytes(bytemuck::cast([
            y.sums[2 * pair],
            y.sums[2 * pair + 1],
        ])));
        total = _mm256_add_epi32(total, _mm256_madd_epi16(scale_pairs(w, pair), sums));
    }
    total
}
