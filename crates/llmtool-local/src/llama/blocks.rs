//! The quantized block formats the kernels compute with: llama.cpp's Q4_1 and Q8_0 layouts for
//! weights, and a Q8 block with its sum for activations.

use half::f16;

/// Values per block, in every format.
pub(crate) const BLOCK: usize = 32;

/// 32 weights as 4-bit codes: value = `d` × code + `m`. Codes 0..16 are the low nibbles of `qs`,
/// codes 16..32 the high nibbles (llama.cpp's order).
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
pub(crate) struct BlockQ4_1 {
    pub d: f16,
    pub m: f16,
    pub qs: [u8; 16],
}

/// 32 weights as 8-bit codes: value = `d` × code.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
pub(crate) struct BlockQ8_0 {
    pub d: f16,
    pub qs: [i8; 32],
}

/// 32 activations as 8-bit codes, value = `d` × code, with `sum` = `d` × Σ codes (which the
/// offset `m` of a Q4_1 weight block multiplies).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(C)]
pub(crate) struct BlockQ8 {
    pub d: f32,
    pub sum: f32,
    pub qs: [i8; 32],
}

impl BlockQ4_1 {
    /// Parses llama.cpp's 20-byte Q4_1 block.
    pub(crate) fn parse(bytes: &[u8]) -> Self {
        Self {
            d: f16::from_le_bytes([bytes[0], bytes[1]]),
            m: f16::from_le_bytes([bytes[2], bytes[3]]),
            qs: bytes[4..20].try_into().unwrap_or_default(),
        }
    }

    /// Parses llama.cpp's 18-byte Q4_0 block (value = `d` × (code − 8)): the same as a Q4_1
    /// block with `m` = −8`d`, which is exact in f16.
    pub(crate) fn parse_q4_0(bytes: &[u8]) -> Self {
        let d = f16::from_le_bytes([bytes[0], bytes[1]]);
        Self {
            d,
            m: f16::from_f32(-8.0 * d.to_f32()),
            qs: bytes[2..18].try_into().unwrap_or_default(),
        }
    }

    pub(crate) fn dequantize(&self, out: &mut [f32]) {
        let (d, m) = (self.d.to_f32(), self.m.to_f32());
        for (i, byte) in self.qs.iter().enumerate() {
            out[i] = d * f32::from(byte & 0x0F) + m;
            out[i + 16] = d * f32::from(byte >> 4) + m;
        }
    }
}

impl BlockQ8_0 {
    /// Parses llama.cpp's 34-byte Q8_0 block.
    pub(crate) fn parse(bytes: &[u8]) -> Self {
        let mut qs = [0i8; 32];
        for (q, byte) in qs.iter_mut().zip(&bytes[2..34]) {
            *q = i8::from_le_bytes([*byte]);
        }
        Self { d: f16::from_le_bytes([bytes[0], bytes[1]]), qs }
    }

    /// Quantizes 32 values (round to nearest, scale from the largest magnitude).
    pub(crate) fn quantize(values: &[f32]) -> Self {
        let (d, qs) = quantize_block(values);
        Self { d: f16::from_f32(d), qs }
    }

    pub(crate) fn dequantize(&self, out: &mut [f32]) {
        let d = self.d.to_f32();
        for (value, q) in out.iter_mut().zip(self.qs) {
            *value = d * f32::from(q);
        }
    }
}

impl BlockQ8 {
    pub(crate) fn quantize(values: &[f32]) -> Self {
        let (d, qs) = quantize_block(values);
        let codes: i32 = qs.iter().map(|&q| i32::from(q)).sum();
        Self { d, sum: d * codes as f32, qs }
    }
}

/// Quantizes each run of 32 values of `values` into `out` (`values.len()` is a multiple of 32).
pub(crate) fn quantize_activations(values: &[f32], out: &mut Vec<BlockQ8>) {
    out.clear();
    out.extend(values.chunks_exact(BLOCK).map(BlockQ8::quantize));
}

fn quantize_block(values: &[f32]) -> (f32, [i8; 32]) {
    let largest = values.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let d = largest / 127.0;
    let inverse = if d > 0.0 { 1.0 / d } else { 0.0 };
    let mut qs = [0i8; 32];
    for (q, value) in qs.iter_mut().zip(values) {
        *q = (value * inverse).round() as i8;
    }
    (d, qs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::float_cmp, reason = "the conversion is exact")]
    fn q4_0_blocks_become_exact_q4_1_blocks() {
        let mut bytes = vec![0u8; 18];
        bytes[..2].copy_from_slice(&f16::from_f32(0.25).to_le_bytes());
        for (i, byte) in bytes[2..].iter_mut().enumerate() {
            *byte = (i as u8) | ((15 - i as u8) << 4);
        }
        let mut values = [0.0f32; 32];
        BlockQ4_1::parse_q4_0(&bytes).dequantize(&mut values);
        for i in 0..16 {
            assert_eq!(values[i], 0.25 * (i as f32 - 8.0));
            assert_eq!(values[i + 16], 0.25 * (7.0 - i as f32));
        }
    }

    #[test]
    fn quantizing_keeps_values_within_half_a_step() {
        let values: Vec<f32> = (0..32).map(|i| (i as f32 - 13.5) * 0.37).collect();
        let block = BlockQ8_0::quantize(&values);
        let mut back = [0.0f32; 32];
        block.dequantize(&mut back);
        let step = block.d.to_f32();
        for (a, b) in values.iter().zip(back) {
            assert!((a - b).abs() <= step * 0.51, "{a} vs {b}");
        }
        let activation = BlockQ8::quantize(&values);
        let sum: f32 = values.iter().sum();
        assert!((activation.sum - sum).abs() < activation.d * 16.0);
    }
}
