//! The two loops of attention, in AVX2 with FMA where the CPU has them (detected at run time),
//! portable Rust elsewhere: a query's scores against a run of cached keys, and the sum of
//! cached values weighted by those scores.
//!
//! Written by hand because the plain loops compile to a horizontal sum per key and to code the
//! compiler cannot widen past the baseline's four lanes: when eight answers decode together,
//! attention took as long as all the matrix products. The vector code computes exactly the
//! plain loops' numbers (the same products, added in the same order, unfused), so that an
//! answer does not depend on the CPU it was computed on (tested bit for bit).
#![allow(unsafe_code, reason = "SIMD intrinsics: unaligned loads and calls behind a CPU check")]

/// `out[i]` = `query` · the key of position `first + i`, for `out.len()` positions; the key of
/// position `p` is `keys[p × stride..][..query.len()]`.
pub(crate) fn scores(query: &[f32], keys: &[f32], stride: usize, first: usize, out: &mut [f32]) {
    debug_assert!(keys.len() >= (first + out.len()).saturating_sub(1) * stride + query.len());
    #[cfg(target_arch = "x86_64")]
    if x86::available() && query.len().is_multiple_of(8) {
        // SAFETY: the CPU has every feature `x86::scores` is compiled with.
        unsafe { x86::scores(query, keys, stride, first, out) };
        return;
    }
    for (i, out) in out.iter_mut().enumerate() {
        let key = &keys[(first + i) * stride..][..query.len()];
        *out = dot(query, key);
    }
}

/// `out` += Σ `weights[i]` × the value of position `first + i`; the value of position `p` is
/// `values[p × stride..][..out.len()]`.
pub(crate) fn add_weighted(
    weights: &[f32],
    values: &[f32],
    stride: usize,
    first: usize,
    out: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    if x86::available() && out.len().is_multiple_of(8) {
        // SAFETY: the CPU has every feature `x86::add_weighted` is compiled with.
        unsafe { x86::add_weighted(weights, values, stride, first, out) };
        return;
    }
    for (i, &weight) in weights.iter().enumerate() {
        let value = &values[(first + i) * stride..][..out.len()];
        for (o, v) in out.iter_mut().zip(value) {
            *o += weight * v;
        }
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight running sums, so that the compiler can use vector registers.
    let mut sums = [0.0f32; 8];
    for (a, b) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        for i in 0..8 {
            sums[i] += a[i] * b[i];
        }
    }
    let tail = a.len() - a.len() % 8;
    sums.iter().sum::<f32>() + a[tail..].iter().zip(&b[tail..]).map(|(a, b)| a * b).sum::<f32>()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m256, _mm256_add_ps, _mm256_loadu_ps, _mm256_mul_ps, _mm256_permute2f128_ps,
        _mm256_set1_ps, _mm256_setzero_ps, _mm256_shuffle_ps, _mm256_storeu_ps, _mm256_unpackhi_ps,
        _mm256_unpacklo_ps,
    };

    pub(super) fn available() -> bool {
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
    }

    /// 8 floats of `values` from `at` (which the caller keeps in bounds).
    #[target_feature(enable = "avx2,fma")]
    fn load(values: &[f32], at: usize) -> __m256 {
        debug_assert!(at + 8 <= values.len());
        // SAFETY: reads 8 of the slice's floats, `at + 8 ≤ len` (an unaligned load).
        unsafe { _mm256_loadu_ps(values.as_ptr().add(at)) }
    }

    /// What an empty sum of floats is in Rust (the plain loops start from it).
    fn empty_sum() -> f32 {
        [0.0f32; 0].iter().sum()
    }

    /// The eight lanes of `v` added in order, as `[f32; 8]::iter().sum()` adds them.
    #[target_feature(enable = "avx2,fma")]
    fn sum_in_order(v: __m256) -> f32 {
        let mut lanes = [0.0f32; 8];
        // SAFETY: stores 8 floats into an array of 8 (an unaligned store).
        unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), v) };
        lanes.iter().sum()
    }

    /// Lane `j` of the result is lane `i` of `rows[j]`, for row `i` of the result (an 8 × 8
    /// transpose).
    #[target_feature(enable = "avx2,fma")]
    fn transpose(rows: [__m256; 8]) -> [__m256; 8] {
        let [r0, r1, r2, r3, r4, r5, r6, r7] = rows;
        let (t0, t1) = (_mm256_unpacklo_ps(r0, r1), _mm256_unpackhi_ps(r0, r1));
        let (t2, t3) = (_mm256_unpacklo_ps(r2, r3), _mm256_unpackhi_ps(r2, r3));
        let (t4, t5) = (_mm256_unpacklo_ps(r4, r5), _mm256_unpackhi_ps(r4, r5));
        let (t6, t7) = (_mm256_unpacklo_ps(r6, r7), _mm256_unpackhi_ps(r6, r7));
        let (u0, u1) = (_mm256_shuffle_ps::<0x44>(t0, t2), _mm256_shuffle_ps::<0xEE>(t0, t2));
        let (u2, u3) = (_mm256_shuffle_ps::<0x44>(t1, t3), _mm256_shuffle_ps::<0xEE>(t1, t3));
        let (u4, u5) = (_mm256_shuffle_ps::<0x44>(t4, t6), _mm256_shuffle_ps::<0xEE>(t4, t6));
        let (u6, u7) = (_mm256_shuffle_ps::<0x44>(t5, t7), _mm256_shuffle_ps::<0xEE>(t5, t7));
        [
            _mm256_permute2f128_ps::<0x20>(u0, u4),
            _mm256_permute2f128_ps::<0x20>(u1, u5),
            _mm256_permute2f128_ps::<0x20>(u2, u6),
            _mm256_permute2f128_ps::<0x20>(u3, u7),
            _mm256_permute2f128_ps::<0x31>(u0, u4),
            _mm256_permute2f128_ps::<0x31>(u1, u5),
            _mm256_permute2f128_ps::<0x31>(u2, u6),
            _mm256_permute2f128_ps::<0x31>(u3, u7),
        ]
    }

    /// Eight keys at a time, each with the plain `dot`'s eight running sums in a vector; the
    /// eight vectors transposed, so that one pass of additions sums each key's lanes in their
    /// order.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn scores(
        query: &[f32],
        keys: &[f32],
        stride: usize,
        first: usize,
        out: &mut [f32],
    ) {
        let width = query.len();
        let empty = _mm256_set1_ps(empty_sum());
        let mut chunks = out.chunks_exact_mut(8);
        let mut position = first;
        for out in &mut chunks {
            let mut acc = [_mm256_setzero_ps(); 8];
            for c in (0..width).step_by(8) {
                let q = load(query, c);
                for (j, acc) in acc.iter_mut().enumerate() {
                    let key = load(keys, (position + j) * stride + c);
                    *acc = _mm256_add_ps(*acc, _mm256_mul_ps(q, key));
                }
            }
            let lanes = transpose(acc);
            let mut sums = _mm256_add_ps(empty, lanes[0]);
            for lane in &lanes[1..] {
                sums = _mm256_add_ps(sums, *lane);
            }
            // The plain `dot` adds its (empty) tail's sum last.
            sums = _mm256_add_ps(sums, empty);
            // SAFETY: stores 8 floats into a chunk of 8 (an unaligned store).
            unsafe { _mm256_storeu_ps(out.as_mut_ptr(), sums) };
            position += 8;
        }
        for out in chunks.into_remainder() {
            let mut acc = _mm256_setzero_ps();
            for c in (0..width).step_by(8) {
                let key = load(keys, position * stride + c);
                acc = _mm256_add_ps(acc, _mm256_mul_ps(load(query, c), key));
            }
            *out = sum_in_order(acc) + empty_sum();
            position += 1;
        }
    }

    /// Sixty-four values of `out` at a time, held in eight registers over every position (each
    /// value's products added in the positions' order, as the plain loop adds them).
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn add_weighted(
        weights: &[f32],
        values: &[f32],
        stride: usize,
        first: usize,
        out: &mut [f32],
    ) {
        for start in (0..out.len()).step_by(64) {
            let lanes = ((out.len() - start) / 8).min(8);
            let mut acc = [_mm256_setzero_ps(); 8];
            for (j, acc) in acc.iter_mut().enumerate().take(lanes) {
                *acc = load(out, start + 8 * j);
            }
            for (i, &weight) in weights.iter().enumerate() {
                let weight = _mm256_set1_ps(weight);
                let at = (first + i) * stride + start;
                for (j, acc) in acc.iter_mut().enumerate().take(lanes) {
                    *acc = _mm256_add_ps(*acc, _mm256_mul_ps(weight, load(values, at + 8 * j)));
                }
            }
            for (j, acc) in acc.into_iter().enumerate().take(lanes) {
                // SAFETY: stores 8 floats at `start + 8j`, within `out` (`lanes` counts them).
                unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(start + 8 * j), acc) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wave(n: usize, k: f32) -> Vec<f32> {
        (0..n).map(|i| ((i as f32) * k).sin()).collect()
    }

    /// The plain loops, as the portable path runs them.
    fn plain_scores(query: &[f32], keys: &[f32], stride: usize, first: usize, out: &mut [f32]) {
        for (i, out) in out.iter_mut().enumerate() {
            *out = dot(query, &keys[(first + i) * stride..][..query.len()]);
        }
    }

    fn plain_add_weighted(
        weights: &[f32],
        values: &[f32],
        stride: usize,
        first: usize,
        out: &mut [f32],
    ) {
        for (i, &weight) in weights.iter().enumerate() {
            let value = &values[(first + i) * stride..][..out.len()];
            for (o, v) in out.iter_mut().zip(value) {
                *o += weight * v;
            }
        }
    }

    #[test]
    fn scores_and_weighted_sums_are_the_plain_loops_bit_for_bit() {
        // Heads of 64 and 40 values (one chunk of 64 and a part), positions that fill runs of
        // eight and leave a remainder, keys and values interleaved with others (a stride).
        for (width, stride, first, count) in [(64, 192, 3, 21), (40, 80, 0, 8), (16, 16, 5, 3)] {
            let keys = wave((first + count) * stride, 0.37);
            let query = wave(width, 0.11);
            let (mut ours, mut theirs) = (vec![0.0; count], vec![0.0; count]);
            scores(&query, &keys, stride, first, &mut ours);
            plain_scores(&query, &keys, stride, first, &mut theirs);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&ours), bits(&theirs), "scores, width {width}");
            for (i, ours) in ours.iter().enumerate() {
                let key = &keys[(first + i) * stride..][..width];
                let expected: f64 = query.iter().zip(key).map(|(q, k)| f64::from(q * k)).sum();
                assert!((f64::from(*ours) - expected).abs() < 1e-4, "score {i} of {count}");
            }
            let weights = wave(count, 0.7);
            let (mut ours, mut theirs) = (wave(width, 0.5), wave(width, 0.5));
            add_weighted(&weights, &keys, stride, first, &mut ours);
            plain_add_weighted(&weights, &keys, stride, first, &mut theirs);
            assert_eq!(bits(&ours), bits(&theirs), "weighted sums, width {width}");
        }
    }
}
