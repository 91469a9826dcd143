//! The quantized block formats of GGUF weights that the kernels compute with as they are in the
//! file (llama.cpp's layouts, byte for byte, so a mapped file is used without a copy), and the
//! Q8 block with its sum that activations are quantized to.
//!
//! Every block here is made of bytes only (alignment 1), so a run of them can be viewed in any
//! slice of the file. Values are `d` × code (+ an offset): see each type.

use bytemuck::{Pod, Zeroable};
use half::f16;

use super::math::nearest;

/// Values per block in the 32-value formats, and per activation block.
pub(crate) const BLOCK: usize = 32;
/// Values per super-block in the K formats.
pub(crate) const SUPER: usize = 256;

/// A block of weights as stored in a GGUF file.
pub(crate) trait Stored: Pod {
    /// Values in one block.
    const VALUES: usize;
    /// Writes the block's values into `out` (`VALUES` long).
    fn dequantize(&self, out: &mut [f32]);
}

/// An `f16` stored little-endian, as `f32`.
pub(crate) fn half(bytes: [u8; 2]) -> f32 {
    f16::from_le_bytes(bytes).to_f32()
}

/// 32 weights as 4-bit codes: value = `d` × (code − 8). Codes 0..16 are the low nibbles of
/// `qs`, codes 16..32 the high nibbles.
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct BlockQ4_0 {
    pub d: [u8; 2],
    pub qs: [u8; 16],
}

/// 32 weights as 4-bit codes: value = `d` × code + `m`, codes as in [`BlockQ4_0`].
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct BlockQ4_1 {
    pub d: [u8; 2],
    pub m: [u8; 2],
    pub qs: [u8; 16],
}

/// 32 weights as 5-bit codes: value = `d` × (code − 16). The low four bits as in
/// [`BlockQ4_0`]; bit `i` of `qh` (little-endian) is the fifth bit of code `i`.
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct BlockQ5_0 {
    pub d: [u8; 2],
    pub qh: [u8; 4],
    pub qs: [u8; 16],
}

/// 32 weights as 5-bit codes: value = `d` × code + `m`, codes as in [`BlockQ5_0`].
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct BlockQ5_1 {
    pub d: [u8; 2],
    pub m: [u8; 2],
    pub qh: [u8; 4],
    pub qs: [u8; 16],
}

/// 32 weights as 8-bit codes: value = `d` × code.
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct BlockQ8_0 {
    pub d: [u8; 2],
    pub qs: [i8; 32],
}

/// 256 weights in eight runs of 32, each with a 6-bit scale and a 6-bit minimum:
/// value = `d` × scale × code − `dmin` × min, codes 4-bit. Each 32 bytes of `qs` hold two runs:
/// the low nibbles the first, the high nibbles the second.
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct BlockQ4K {
    pub d: [u8; 2],
    pub dmin: [u8; 2],
    pub scales: [u8; 12],
    pub qs: [u8; 128],
}

/// As [`BlockQ4K`] with 5-bit codes: for the runs of the `j`th 32 bytes of `qs`, bit `2j` of
/// `qh[l]` is the fifth bit of the low nibble's code `l`, bit `2j + 1` the high nibble's.
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct BlockQ5K {
    pub d: [u8; 2],
    pub dmin: [u8; 2],
    pub scales: [u8; 12],
    pub qh: [u8; 32],
    pub qs: [u8; 128],
}

/// 256 weights in sixteen runs of 16, each with a signed 8-bit scale: value = `d` × scale ×
/// (code − 32), codes 6-bit: four bits from `ql`, two from `qh` (see [`BlockQ6K::codes`]).
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct BlockQ6K {
    pub ql: [u8; 128],
    pub qh: [u8; 64],
    pub scales: [i8; 16],
    pub d: [u8; 2],
}

/// 32 activations as 8-bit codes, value = `d` × code, with `sum` = `d` × Σ codes (which the
/// offset of a weight block multiplies).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(C)]
pub(crate) struct BlockQ8 {
    pub d: f32,
    pub sum: f32,
    pub qs: [i8; 32],
}

/// 256 activations as 8-bit codes, value = `d` × code, with the sum of the codes of each 16
/// (which the minimums of a K weight block multiply): the form a K block's product takes, so
/// that its runs are summed as integers and scaled once.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
pub(crate) struct BlockQ8K {
    pub d: f32,
    pub qs: [i8; 256],
    pub sums: [i16; 16],
}

/// Activations quantized in blocks of 32 (which the 32-value formats take), in blocks of 256
/// (the K formats), or both: as a matrix asks ([`Forms`]).
#[derive(Debug, Default)]
pub(crate) struct Activations {
    blocks: Vec<BlockQ8>,
    supers: Vec<BlockQ8K>,
    width: usize,
    tokens: usize,
}

/// Which forms of the activations a matrix's kernels take.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Forms {
    pub blocks: bool,
    pub supers: bool,
}

impl Activations {
    /// Quantizes `values`, tokens of `width` values each (a multiple of 32) one after another,
    /// both ways (blocks of 256 only when the width is a multiple of 256).
    #[cfg(test)]
    pub(crate) fn quantize(&mut self, values: &[f32], width: usize) {
        self.quantize_for(values, width, Forms { blocks: true, supers: true });
    }

    /// Quantizes `values` as [`Activations::quantize`] does, in the forms asked for only.
    #[inline]
    pub(crate) fn quantize_for(&mut self, values: &[f32], width: usize, forms: Forms) {
        self.width = width;
        self.tokens = values.len() / width.max(1);
        self.blocks.clear();
        if forms.blocks {
            super::kernels::quantize_q8(values, &mut self.blocks);
        }
        self.supers.clear();
        if forms.supers && width.is_multiple_of(SUPER) {
            self.supers.extend(values.chunks_exact(SUPER).map(BlockQ8K::quantize));
        }
    }

    pub(crate) fn all(&self) -> Quantized<'_> {
        Quantized {
            blocks: &self.blocks,
            supers: &self.supers,
            width: self.width,
            tokens: self.tokens,
        }
    }
}

/// Quantized activations of a run of tokens (see [`Activations`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Quantized<'a> {
    /// Empty when not asked for.
    pub blocks: &'a [BlockQ8],
    /// Empty when not asked for, or when the width is not a multiple of 256.
    pub supers: &'a [BlockQ8K],
    /// Values per token.
    pub width: usize,
    tokens: usize,
}

impl<'a> Quantized<'a> {
    pub(crate) fn tokens(&self) -> usize {
        self.tokens
    }

    /// Tokens `tokens` alone.
    pub(crate) fn run(&self, tokens: std::ops::Range<usize>) -> Quantized<'a> {
        fn part<'b, T>(all: &'b [T], per_token: usize, tokens: &std::ops::Range<usize>) -> &'b [T] {
            if all.is_empty() {
                all
            } else {
                &all[tokens.start * per_token..tokens.end * per_token]
            }
        }
        Quantized {
            blocks: part(self.blocks, self.width / BLOCK, &tokens),
            supers: part(self.supers, self.width / SUPER, &tokens),
            width: self.width,
            tokens: tokens.len(),
        }
    }
}

/// The 32 codes of a 4-bit block, low nibbles first.
fn nibbles(qs: &[u8; 16]) -> [u8; 32] {
    let mut codes = [0u8; 32];
    for (i, byte) in qs.iter().enumerate() {
        codes[i] = byte & 0x0F;
        codes[i + 16] = byte >> 4;
    }
    codes
}

/// The 32 codes of a 5-bit block.
fn five_bit_codes(qs: &[u8; 16], qh: [u8; 4]) -> [u8; 32] {
    let high = u32::from_le_bytes(qh);
    let mut codes = nibbles(qs);
    for (i, code) in codes.iter_mut().enumerate() {
        *code |= (((high >> i) & 1) as u8) << 4;
    }
    codes
}

impl Stored for BlockQ4_0 {
    const VALUES: usize = BLOCK;
    fn dequantize(&self, out: &mut [f32]) {
        let d = half(self.d);
        for (value, code) in out.iter_mut().zip(nibbles(&self.qs)) {
            *value = d * (f32::from(code) - 8.0);
        }
    }
}

impl Stored for BlockQ4_1 {
    const VALUES: usize = BLOCK;
    fn dequantize(&self, out: &mut [f32]) {
        let (d, m) = (half(self.d), half(self.m));
        for (value, code) in out.iter_mut().zip(nibbles(&self.qs)) {
            *value = d * f32::from(code) + m;
        }
    }
}

impl Stored for BlockQ5_0 {
    const VALUES: usize = BLOCK;
    fn dequantize(&self, out: &mut [f32]) {
        let d = half(self.d);
        for (value, code) in out.iter_mut().zip(five_bit_codes(&self.qs, self.qh)) {
            *value = d * (f32::from(code) - 16.0);
        }
    }
}

impl Stored for BlockQ5_1 {
    const VALUES: usize = BLOCK;
    fn dequantize(&self, out: &mut [f32]) {
        let (d, m) = (half(self.d), half(self.m));
        for (value, code) in out.iter_mut().zip(five_bit_codes(&self.qs, self.qh)) {
            *value = d * f32::from(code) + m;
        }
    }
}

impl Stored for BlockQ8_0 {
    const VALUES: usize = BLOCK;
    fn dequantize(&self, out: &mut [f32]) {
        let d = half(self.d);
        for (value, q) in out.iter_mut().zip(self.qs) {
            *value = d * f32::from(q);
        }
    }
}

/// The scale and minimum of run `j` (0..8) of a K block, from their packed 6-bit form.
pub(crate) fn scale_and_min(scales: &[u8; 12], j: usize) -> (u8, u8) {
    if j < 4 {
        (scales[j] & 63, scales[j + 4] & 63)
    } else {
        (
            (scales[j + 4] & 0x0F) | ((scales[j - 4] >> 6) << 4),
            (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4),
        )
    }
}

impl BlockQ4K {
    /// The codes of run `j` (0..8).
    pub(crate) fn codes(&self, j: usize) -> [u8; 32] {
        let bytes = &self.qs[32 * (j / 2)..][..32];
        let shift = 4 * (j % 2);
        std::array::from_fn(|l| (bytes[l] >> shift) & 0x0F)
    }
}

/// The values of a Q4_K or Q5_K block whose run `j` has the codes `codes(j)`.
fn dequantize_runs(
    (d, dmin): ([u8; 2], [u8; 2]),
    scales: &[u8; 12],
    codes: impl Fn(usize) -> [u8; 32],
    out: &mut [f32],
) {
    let (d, dmin) = (half(d), half(dmin));
    for (j, run) in out.chunks_exact_mut(BLOCK).enumerate() {
        let (scale, min) = scale_and_min(scales, j);
        let (scale, offset) = (d * f32::from(scale), dmin * f32::from(min));
        for (value, code) in run.iter_mut().zip(codes(j)) {
            *value = scale * f32::from(code) - offset;
        }
    }
}

impl Stored for BlockQ4K {
    const VALUES: usize = SUPER;
    fn dequantize(&self, out: &mut [f32]) {
        dequantize_runs((self.d, self.dmin), &self.scales, |j| self.codes(j), out);
    }
}

impl BlockQ5K {
    /// The codes of run `j` (0..8).
    pub(crate) fn codes(&self, j: usize) -> [u8; 32] {
        let bytes = &self.qs[32 * (j / 2)..][..32];
        let shift = 4 * (j % 2);
        std::array::from_fn(|l| ((bytes[l] >> shift) & 0x0F) | (((self.qh[l] >> j) & 1) << 4))
    }
}

impl Stored for BlockQ5K {
    const VALUES: usize = SUPER;
    fn dequantize(&self, out: &mut [f32]) {
        dequantize_runs((self.d, self.dmin), &self.scales, |j| self.codes(j), out);
    }
}

impl BlockQ6K {
    /// The codes (0..64) of the `k`th run of 32 (0..8). Each half of the block (128 values)
    /// takes 64 bytes of `ql` and 32 of `qh`: runs 0 and 1 are the low nibbles of the two
    /// 32-byte halves of its `ql`, runs 2 and 3 their high nibbles, and the two high bits of
    /// run `r` are bits `2r` and `2r + 1` of its `qh` bytes.
    pub(crate) fn codes(&self, k: usize) -> [u8; 32] {
        let (half, run) = (k / 4, k % 4);
        let ql = &self.ql[64 * half + 32 * (run % 2)..][..32];
        let qh = &self.qh[32 * half..][..32];
        let shift = 4 * (run / 2);
        std::array::from_fn(|l| ((ql[l] >> shift) & 0x0F) | (((qh[l] >> (2 * run)) & 3) << 4))
    }
}

impl Stored for BlockQ6K {
    const VALUES: usize = SUPER;
    fn dequantize(&self, out: &mut [f32]) {
        let d = half(self.d);
        for (k, run) in out.chunks_exact_mut(BLOCK).enumerate() {
            let codes = self.codes(k);
            for (l, value) in run.iter_mut().enumerate() {
                let scale = f32::from(self.scales[2 * k + l / 16]);
                *value = d * scale * (f32::from(codes[l]) - 32.0);
            }
        }
    }
}

impl BlockQ8_0 {
    /// Quantizes 32 values (round to nearest, scale from the largest magnitude).
    pub(crate) fn quantize(values: &[f32]) -> Self {
        let (d, qs) = quantize_block(values);
        Self { d: f16::from_f32(d).to_le_bytes(), qs }
    }
}

impl BlockQ8 {
    #[inline]
    pub(crate) fn quantize(values: &[f32]) -> Self {
        let (d, qs) = quantize_block(values);
        let codes: i32 = qs.iter().map(|&q| i32::from(q)).sum();
        Self { d, sum: d * codes as f32, qs }
    }
}

impl BlockQ8K {
    #[inline]
    pub(crate) fn quantize(values: &[f32]) -> Self {
        let largest = largest_magnitude(values);
        let d = largest / 127.0;
        let inverse = if d > 0.0 { 1.0 / d } else { 0.0 };
        let mut qs = [0i8; 256];
        for (q, value) in qs.iter_mut().zip(values) {
            *q = nearest(value * inverse) as i8;
        }
        let mut sums = [0i16; 16];
        for (sum, codes) in sums.iter_mut().zip(qs.chunks_exact(16)) {
            *sum = codes.iter().map(|&q| i16::from(q)).sum();
        }
        Self { d, qs, sums }
    }
}

/// The largest |value| (eight running maximums, so that the compiler can use vector
/// registers: one running maximum is a chain of dependent instructions).
#[inline]
fn largest_magnitude(values: &[f32]) -> f32 {
    let mut largest = [0.0f32; 8];
    let mut chunks = values.chunks_exact(8);
    for chunk in &mut chunks {
        for (m, v) in largest.iter_mut().zip(chunk) {
            *m = m.max(v.abs());
        }
    }
    let rest = chunks.remainder().iter().fold(0.0f32, |m, v| m.max(v.abs()));
    largest.into_iter().fold(rest, f32::max)
}

#[inline]
fn quantize_block(values: &[f32]) -> (f32, [i8; 32]) {
    let largest = largest_magnitude(values);
    let d = largest / 127.0;
    let inverse = if d > 0.0 { 1.0 / d } else { 0.0 };
    let mut qs = [0i8; 32];
    for (q, value) in qs.iter_mut().zip(values) {
        *q = nearest(value * inverse) as i8;
    }
    (d, qs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_sizes_are_llama_cpps() {
        use std::mem::size_of;
        assert_eq!(size_of::<BlockQ4_0>(), 18);
        assert_eq!(size_of::<BlockQ4_1>(), 20);
        assert_eq!(size_of::<BlockQ5_0>(), 22);
        assert_eq!(size_of::<BlockQ5_1>(), 24);
        assert_eq!(size_of::<BlockQ8_0>(), 34);
        assert_eq!(size_of::<BlockQ4K>(), 144);
        assert_eq!(size_of::<BlockQ5K>(), 176);
        assert_eq!(size_of::<BlockQ6K>(), 210);
    }

    #[test]
    #[allow(clippy::float_cmp, reason = "the values are exact")]
    fn q4_0_codes_are_centred_on_eight() {
        let mut block = BlockQ4_0 { d: f16::from_f32(0.25).to_le_bytes(), qs: [0; 16] };
        for (i, byte) in block.qs.iter_mut().enumerate() {
            *byte = (i as u8) | ((15 - i as u8) << 4);
        }
        let mut values = [0.0f32; 32];
        block.dequantize(&mut values);
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
        let step = half(block.d);
        for (a, b) in values.iter().zip(back) {
            assert!((a - b).abs() <= step * 0.51, "{a} vs {b}");
        }
        let activation = BlockQ8::quantize(&values);
        let sum: f32 = values.iter().sum();
        assert!((activation.sum - sum).abs() < activation.d * 16.0);
    }
}
