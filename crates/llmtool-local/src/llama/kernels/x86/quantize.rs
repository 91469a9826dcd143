//! Activations quantized to Q8 blocks of 32 in AVX2: the same codes as `BlockQ8::quantize`
//! (the largest magnitude over 127 as the scale, each value times its inverse rounded to the
//! nearest even integer), eight values at a time rather than one conversion each.

use std::arch::x86_64::{
    _MM_FROUND_NO_EXC, _MM_FROUND_TO_NEAREST_INT, _mm_add_epi32, _mm_cvtsi128_si32, _mm_cvtss_f32,
    _mm_max_ps, _mm_movehl_ps, _mm_shuffle_epi32, _mm_shuffle_ps, _mm256_add_epi32, _mm256_and_ps,
    _mm256_castps256_ps128, _mm256_castsi256_si128, _mm256_cvtps_epi32, _mm256_extractf128_ps,
    _mm256_extracti128_si256, _mm256_loadu_ps, _mm256_max_ps, _mm256_mul_ps, _mm256_packs_epi16,
    _mm256_packs_epi32, _mm256_permutevar8x32_epi32, _mm256_round_ps, _mm256_set1_ps,
    _mm256_setr_epi32, _mm256_storeu_si256,
};

use crate::llama::blocks::{BLOCK, BlockQ8};

/// Each 32 of `values` as a block, appended to `out`.
#[target_feature(enable = "avx2,fma,f16c")]
pub(in crate::llama::kernels) fn q8_blocks(values: &[f32], out: &mut Vec<BlockQ8>) {
    let magnitude = _mm256_set1_ps(f32::from_bits(0x7FFF_FFFF));
    for values in values.chunks_exact(BLOCK) {
        // SAFETY: reads 4 × 8 floats of a chunk of 32 (unaligned loads).
        let v = unsafe {
            let at = values.as_ptr();
            [
                _mm256_loadu_ps(at),
                _mm256_loadu_ps(at.add(8)),
                _mm256_loadu_ps(at.add(16)),
                _mm256_loadu_ps(at.add(24)),
            ]
        };
        let largest = v.map(|v| _mm256_and_ps(v, magnitude));
        let largest = _mm256_max_ps(
            _mm256_max_ps(largest[0], largest[1]),
            _mm256_max_ps(largest[2], largest[3]),
        );
        let half = _mm_max_ps(_mm256_castps256_ps128(largest), _mm256_extractf128_ps::<1>(largest));
        let pair = _mm_max_ps(half, _mm_movehl_ps(half, half));
        let one = _mm_max_ps(pair, _mm_shuffle_ps::<0b01>(pair, pair));
        let largest = _mm_cvtss_f32(one);
        let d = largest / 127.0;
        let inverse = _mm256_set1_ps(if d > 0.0 { 1.0 / d } else { 0.0 });
        let codes = v.map(|v| {
            let scaled = _mm256_mul_ps(v, inverse);
            _mm256_cvtps_epi32(
                _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(scaled),
            )
        });
        let total = _mm256_add_epi32(
            _mm256_add_epi32(codes[0], codes[1]),
            _mm256_add_epi32(codes[2], codes[3]),
        );
        let total =
            _mm_add_epi32(_mm256_castsi256_si128(total), _mm256_extracti128_si256::<1>(total));
        let total = _mm_add_epi32(total, _mm_shuffle_epi32::<0b1110>(total));
        let total = _mm_add_epi32(total, _mm_shuffle_epi32::<0b01>(total));
        let sum = _mm_cvtsi128_si32(total);
        // Packing works within 128-bit halves: the permutation puts the eight words back in
        // order.
        let words = _mm256_packs_epi16(
            _mm256_packs_epi32(codes[0], codes[1]),
            _mm256_packs_epi32(codes[2], codes[3]),
        );
        let ordered = _mm256_permutevar8x32_epi32(words, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        let mut qs = [0i8; 32];
        // SAFETY: stores 32 bytes into an array of 32 (an unaligned store).
        unsafe { _mm256_storeu_si256(qs.as_mut_ptr().cast(), ordered) };
        out.push(BlockQ8 { d, sum: d * sum as f32, qs });
    }
}
