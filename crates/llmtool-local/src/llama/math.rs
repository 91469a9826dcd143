//! Rounding and the exponential written so that the compiler turns a loop over them into
//! vector instructions: the standard library's `f32::round` and `f32::exp` are calls into the
//! C library, one value at a time, and were a tenth of a decoding step (quantizing the
//! activations, and SiLU or GELU over the feed-forward block's thousands of values).

/// `value` (below 2²² in size) rounded to the nearest integer, ties to even, as llama.cpp's
/// vector code rounds. Adding and taking away 1.5 × 2²³ leaves no fraction bits, so the float
/// unit's own rounding does it.
pub(crate) fn nearest(value: f32) -> f32 {
    const SHIFT: f32 = 12_582_912.0;
    (value + SHIFT) - SHIFT
}

/// e^x, within two units in the last place of `f32::exp` (Cephes' method: x = n ln 2 + r with
/// |r| ≤ ln 2 / 2, e^r by a polynomial, 2^n put in the exponent bits). Below −87.3 it gives
/// e^−87.3 (about 1.2e−38) rather than a subnormal or 0, above 88.7 e^88.7 rather than
/// infinity; NaN stays NaN.
pub(crate) fn exp(x: f32) -> f32 {
    const LOG2_E: f32 = std::f32::consts::LOG2_E;
    // ln 2 in two parts, the first exact in few bits, so that n × it loses nothing.
    const LN2_HIGH: f32 = 0.693_359_4;
    const LN2_LOW: f32 = -2.121_944_4e-4;
    let x = x.clamp(-87.3, 88.7);
    let n = nearest(x * LOG2_E);
    let r = x - n * LN2_HIGH - n * LN2_LOW;
    let mut p = 1.987_569_1e-4;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5;
    let e_r = p * r * r + r + 1.0;
    // n is in −126..=128 after the clamp; 2^n as a float's exponent bits (2^128 is reached
    // only as e^88.7's 2^128 × e^r with r < 0, built as 2^127 × 2 below).
    let n = n as i32;
    let half = f32::from_bits(((n / 2 + 127) as u32) << 23);
    let rest = f32::from_bits(((n - n / 2 + 127) as u32) << 23);
    e_r * half * rest
}

/// tanh through [`exp`]: 1 − 2 / (e^2x + 1), exact in its limits (±1) and within 1e-7 of
/// `f32::tanh` near 0 in absolute terms.
pub(crate) fn tanh(x: f32) -> f32 {
    1.0 - 2.0 / (exp(2.0 * x) + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_within_two_units_of_the_standard_one() {
        let mut worst = 0.0f32;
        for i in -87_000..=88_000 {
            let x = i as f32 / 1000.0 + 0.000_37;
            let (ours, theirs) = (exp(x), x.exp());
            worst = worst.max(((ours - theirs) / theirs).abs());
        }
        assert!(worst < 2.0 * f32::EPSILON, "relative error {worst}");
        assert!(exp(f32::NAN).is_nan());
        assert!(exp(-1000.0) > 0.0 && exp(1000.0).is_finite());
        assert!((exp(0.0) - 1.0).abs() <= f32::EPSILON);
    }

    #[test]
    fn tanh_is_close_to_the_standard_one_and_exact_at_its_limits() {
        for i in -20_000..=20_000 {
            let x = i as f32 / 1000.0;
            assert!((tanh(x) - x.tanh()).abs() < 2e-7, "tanh({x}): {} vs {}", tanh(x), x.tanh());
        }
        assert!((tanh(100.0) - 1.0).abs() <= f32::EPSILON);
        assert!((tanh(-100.0) + 1.0).abs() <= f32::EPSILON);
    }

    #[test]
    #[allow(clippy::float_cmp, reason = "the values are exact")]
    fn nearest_rounds_ties_to_even() {
        assert_eq!(
            [0.5, 1.5, 2.5, -0.5, -1.5, 126.6, -127.4].map(nearest),
            [0.0, 2.0, 2.0, -0.0, -2.0, 127.0, -127.0]
        );
    }
}
