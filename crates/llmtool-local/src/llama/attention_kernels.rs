//! The two loops of attention, in AVX2 with FMA where the CPU has them (detected at run time),
//! portable Rust elsewhere: a query's scores against a run of cached keys, and the sum of
//! cached values weighted by those scores.
//!
//! Written by hand because Rust neither fuses a multiply and an add nor reorders float sums, so
//! the plain loops compile to separate multiplies and adds and a horizontal sum per key: when
//! eight answers decode together, attention took as long as all the matrix products.
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
        __m256, _mm_add_ps, _mm_add_ss, _mm_cvtss_f32, _mm_movehdup_ps, _mm_movehl_ps,
        _mm256_add_ps, _mm256_castps256_ps128, _mm256_extractf128_ps, _mm256_fmadd_ps,
        _mm256_hadd_ps, _mm256_loadu_ps, _mm256_permute2f128_ps, _mm256_set1_ps, _mm256_setzero_ps,
        _mm256_storeu_ps,
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

    #[target_feature(enable = "avx2,fma")]
    fn sum(v: __m256) -> f32 {
        let halves = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let pairs = _mm_add_ps(halves, _mm_movehl_ps(halves, halves));
        _mm_cvtss_f32(_mm_add_ss(pairs, _mm_movehdup_ps(pairs)))
    }

    /// Eight keys at a time: eight running sums, added across in one pass at the end (the
    /// horizontal sums of eight vectors in one).
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn scores(
        query: &[f32],
        keys: &[f32],
        stride: usize,
        first: usize,
        out: &mut [f32],
    ) {
        let width = query.len();
        let mut chunks = out.chunks_exact_mut(8);
        let mut position = first;
        for out in &mut chunks {
            let mut acc = [_mm256_setzero_ps(); 8];
            for c in (0..width).step_by(8) {
                let q = load(query, c);
                for (j, acc) in acc.iter_mut().enumerate() {
                    *acc = _mm256_fmadd_ps(q, load(keys, (position + j) * stride + c), *acc);
                }
            }
            // hadd of hadds: lane i of `low` and `high` each hold half of key i's sum.
            let quarters = |a, b, c, d| _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));
            let first_four = quarters(acc[0], acc[1], acc[2], acc[3]);
            let last_four = quarters(acc[4], acc[5], acc[6], acc[7]);
            let low = _mm256_permute2f128_ps::<0x20>(first_four, last_four);
            let high = _mm256_permute2f128_ps::<0x31>(first_four, last_four);
            // SAFETY: stores 8 floats into a chunk of 8 (an unaligned store).
            unsafe { _mm256_storeu_ps(out.as_mut_ptr(), _mm256_add_ps(low, high)) };
            position += 8;
        }
        for out in chunks.into_remainder() {
            let mut acc = _mm256_setzero_ps();
            for c in (0..width).step_by(8) {
                acc = _mm256_fmadd_ps(load(query, c), load(keys, position * stride + c), acc);
            }
            *out = sum(acc);
            position += 1;
        }
    }

    /// Sixty-four values of `out` at a time, held in eight registers over every position.
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
                    *acc = _mm256_fmadd_ps(weight, load(values, at + 8 * j), *acc);
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

    #[test]
    fn scores_and_weighted_sums_match_the_plain_loops() {
        // Heads of 64 and 40 values (one chunk of 64 and a part), positions that fill runs of
        // eight and leave a remainder, keys and values interleaved with others (a stride).
        for (width, stride, first, count) in [(64, 192, 3, 21), (40, 80, 0, 8), (16, 16, 5, 3)] {
            let keys = wave((first + count) * stride, 0.37);
            let query = wave(width, 0.11);
            let mut ours = vec![0.0; count];
            scores(&query, &keys, stride, first, &mut ours);
            for (i, ours) in ours.iter().enumerate() {
                let key = &keys[(first + i) * stride..][..width];
                let expected: f64 = query.iter().zip(key).map(|(q, k)| f64::from(q * k)).sum();
                assert!((f64::from(*ours) - expected).abs() < 1e-4, "score {i} of {count}");
            }
            let weights = wave(count, 0.7);
            let mut out = wave(width, 0.5);
            let mut expected: Vec<f64> = out.iter().map(|&v| f64::from(v)).collect();
            add_weighted(&weights, &keys, stride, first, &mut out);
            for (i, &w) in weights.iter().enumerate() {
                for (e, v) in expected.iter_mut().zip(&keys[(first + i) * stride..][..width]) {
                    *e += f64::from(w) * f64::from(*v);
                }
            }
            for (o, e) in out.iter().zip(&expected) {
                assert!((f64::from(*o) - e).abs() < 1e-4);
            }
        }
    }
}
