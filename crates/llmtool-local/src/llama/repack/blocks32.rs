//! The 32-value formats regrouped eight rows at a time. Each keeps its rows' scales (and
//! minimums) as they are, and interleaves their codes four bytes at a time: a 4-bit format's
//! 32-byte chunk `k` (0 to 3) holds bytes `4k..4k + 4` of each row, whose low nibbles are
//! codes `4k..4k + 4` and high nibbles codes `16 + 4k..`; a Q8_0 chunk `c` (0 to 7) holds codes
//! `4c..4c + 4` of each row. A 5-bit format's fifth bits become one more 32-byte plane laid
//! out as its chunks (see [`BlockQ5_0x8::high`]), so that a shift and a mask give them.
//!
//! Each regrouped block has the size of the eight blocks it came from, and gives each back
//! exactly (`source`), which is how a row is dequantized.

use bytemuck::{Pod, Zeroable};

use super::{Grouped, ROWS, interleave_words, row_of_words};
use crate::llama::blocks::{BlockQ4_0, BlockQ4_1, BlockQ5_0, BlockQ5_1, BlockQ8_0, Stored};

/// 32 values of eight rows of a Q4_0 matrix.
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct BlockQ4_0x8 {
    /// Each row's scale (f16), row by row.
    pub d: [[u8; 2]; ROWS],
    /// The rows' `qs`, interleaved four bytes at a time.
    pub qs: [u8; 16 * ROWS],
}

/// 32 values of eight rows of a Q4_1 matrix.
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct BlockQ4_1x8 {
    pub d: [[u8; 2]; ROWS],
    /// Each row's minimum (f16).
    pub m: [[u8; 2]; ROWS],
    pub qs: [u8; 16 * ROWS],
}

/// 32 values of eight rows of a Q5_0 matrix.
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct BlockQ5_0x8 {
    pub d: [[u8; 2]; ROWS],
    /// The fifth bits, placed as the codes whose bits they are: bit `k` of byte `4 × row + i`
    /// is the fifth bit of row `row`'s code `4k + i` (a low nibble of chunk `k`), bit `4 + k`
    /// that of its code `16 + 4k + i` (the high nibble).
    pub high: [u8; 32],
    pub qs: [u8; 16 * ROWS],
}

/// 32 values of eight rows of a Q5_1 matrix.
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct BlockQ5_1x8 {
    pub d: [[u8; 2]; ROWS],
    pub m: [[u8; 2]; ROWS],
    pub high: [u8; 32],
    pub qs: [u8; 16 * ROWS],
}

/// 32 values of eight rows of a Q8_0 matrix.
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct BlockQ8_0x8 {
    pub d: [[u8; 2]; ROWS],
    /// The rows' codes, interleaved four at a time.
    pub qs: [i8; 32 * ROWS],
}

/// The fifth-bit plane of eight rows' `qh` words (see [`BlockQ5_0x8::high`]).
pub(super) fn fifth_bit_plane(qh: [[u8; 4]; ROWS]) -> [u8; 32] {
    let mut plane = [0u8; 32];
    for (r, qh) in qh.iter().enumerate() {
        let bits = u32::from_le_bytes(*qh);
        for k in 0..4 {
            for i in 0..4 {
                let (low, high) = ((bits >> (4 * k + i)) & 1, (bits >> (16 + 4 * k + i)) & 1);
                plane[4 * r + i] |= ((low << k) | (high << (4 + k))) as u8;
            }
        }
    }
    plane
}

/// Row `row`'s `qh` word back out of a fifth-bit plane.
fn row_of_plane(plane: &[u8; 32], row: usize) -> [u8; 4] {
    let mut bits = 0u32;
    for k in 0..4 {
        for i in 0..4 {
            let byte = u32::from(plane[4 * row + i]);
            bits |= ((byte >> k) & 1) << (4 * k + i);
            bits |= ((byte >> (4 + k)) & 1) << (16 + 4 * k + i);
        }
    }
    bits.to_le_bytes()
}

/// Row `row`'s codes out of an interleaved `qs`.
fn row_codes<const N: usize>(qs: &[u8], row: usize) -> [u8; N] {
    let mut codes = [0u8; N];
    row_of_words(qs, row, &mut codes);
    codes
}

impl Grouped for BlockQ4_0x8 {
    type Source = BlockQ4_0;

    fn interleave(rows: [&BlockQ4_0; ROWS]) -> Self {
        let mut block = Self { d: rows.map(|row| row.d), qs: [0; 16 * ROWS] };
        interleave_words(rows.map(|row| &row.qs[..]), &mut block.qs);
        block
    }

    fn dequantize_row(&self, row: usize, out: &mut [f32]) {
        BlockQ4_0 { d: self.d[row], qs: row_codes(&self.qs, row) }.dequantize(out);
    }
}

impl Grouped for BlockQ4_1x8 {
    type Source = BlockQ4_1;

    fn interleave(rows: [&BlockQ4_1; ROWS]) -> Self {
        let mut block =
            Self { d: rows.map(|row| row.d), m: rows.map(|row| row.m), qs: [0; 16 * ROWS] };
        interleave_words(rows.map(|row| &row.qs[..]), &mut block.qs);
        block
    }

    fn dequantize_row(&self, row: usize, out: &mut [f32]) {
        BlockQ4_1 { d: self.d[row], m: self.m[row], qs: row_codes(&self.qs, row) }.dequantize(out);
    }
}

impl Grouped for BlockQ5_0x8 {
    type Source = BlockQ5_0;

    fn interleave(rows: [&BlockQ5_0; ROWS]) -> Self {
        let mut block = Self {
            d: rows.map(|row| row.d),
            high: fifth_bit_plane(rows.map(|row| row.qh)),
            qs: [0; 16 * ROWS],
        };
        interleave_words(rows.map(|row| &row.qs[..]), &mut block.qs);
        block
    }

    fn dequantize_row(&self, row: usize, out: &mut [f32]) {
        let (qh, qs) = (row_of_plane(&self.high, row), row_codes(&self.qs, row));
        BlockQ5_0 { d: self.d[row], qh, qs }.dequantize(out);
    }
}

impl Grouped for BlockQ5_1x8 {
    type Source = BlockQ5_1;

    fn interleave(rows: [&BlockQ5_1; ROWS]) -> Self {
        let mut block = Self {
            d: rows.map(|row| row.d),
            m: rows.map(|row| row.m),
            high: fifth_bit_plane(rows.map(|row| row.qh)),
            qs: [0; 16 * ROWS],
        };
        interleave_words(rows.map(|row| &row.qs[..]), &mut block.qs);
        block
    }

    fn dequantize_row(&self, row: usize, out: &mut [f32]) {
        let (qh, qs) = (row_of_plane(&self.high, row), row_codes(&self.qs, row));
        BlockQ5_1 { d: self.d[row], m: self.m[row], qh, qs }.dequantize(out);
    }
}

impl Grouped for BlockQ8_0x8 {
    type Source = BlockQ8_0;

    fn interleave(rows: [&BlockQ8_0; ROWS]) -> Self {
        let mut block = Self { d: rows.map(|row| row.d), qs: [0; 32 * ROWS] };
        let codes = rows.map(|row| bytemuck::cast_slice::<i8, u8>(&row.qs));
        interleave_words(codes, bytemuck::cast_slice_mut(&mut block.qs));
        block
    }

    fn dequantize_row(&self, row: usize, out: &mut [f32]) {
        let codes: [u8; 32] = row_codes(bytemuck::cast_slice(&self.qs), row);
        BlockQ8_0 { d: self.d[row], qs: codes.map(u8::cast_signed) }.dequantize(out);
    }
}
