//! Q4_K rows regrouped eight at a time, as llama.cpp's CPU back end does before multiplying.
//!
//! A Q4_K row's super-block is multiplied with a token's activations 32 codes at a time, and
//! each run of 32 then needs its own scale, so a kernel over one row spends as many
//! instructions on scales and sums as on the products. In a [`BlockQ4Kx8`] the same
//! super-block of eight neighbouring rows is interleaved four bytes at a time: one 32-byte load
//! holds eight codes of each of the eight rows, one activation word broadcast to all lanes
//! multiplies them all, and each 32-bit lane stays one row's sum to the end. Scales, minimums
//! and the final sums are then paid once per eight rows (`kernels/x86.rs`).
//!
//! The regrouped matrix is a copy (the mapped file's blocks cannot be used in place), made at
//! load for the layers' Q4_K matrices whose rows come in whole groups of eight.

use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;

use super::blocks::{BlockQ4K, SUPER, Stored, scale_and_min};

/// Rows in a group.
pub(crate) const ROWS: usize = 8;

/// One super-block (256 values) of eight rows of a Q4_K matrix.
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct BlockQ4Kx8 {
    /// Each row's scale of scales (f16), row by row.
    pub d: [[u8; 2]; ROWS],
    /// Each row's scale of minimums (f16).
    pub dmin: [[u8; 2]; ROWS],
    /// `scales[run][row]`: the 6-bit scale of run `run` (32 values) of row `row`, unpacked.
    pub scales: [[u8; ROWS]; 8],
    /// `mins[pair][2 × row + k]`: the 6-bit minimum of run `2 × pair + k` of row `row`, so that
    /// 16 bytes widen to each row's two minimums of a pair of runs.
    pub mins: [[u8; 2 * ROWS]; 4],
    /// `qs[32 × c + 4 × row + i]` = byte `4 × c + i` of row `row`'s `qs`: chunk `c` is the same
    /// four bytes of every row.
    pub qs: [u8; 32 * 32],
}

/// Regroups the blocks of a Q4_K matrix (`rows` a multiple of [`ROWS`], `per_row` blocks a
/// row): group by group, each group's super-blocks in order. The groups are regrouped in
/// parallel: a 1.5B model's take a second on one core.
pub(crate) fn regroup(blocks: &[BlockQ4K], per_row: usize) -> Vec<BlockQ4Kx8> {
    let mut out = vec![BlockQ4Kx8::zeroed(); blocks.len() / ROWS];
    out.par_chunks_mut(per_row).zip(blocks.par_chunks(ROWS * per_row)).for_each(|(out, rows)| {
        for (at, out) in out.iter_mut().enumerate() {
            *out = interleave(std::array::from_fn(|r| &rows[r * per_row + at]));
        }
    });
    out
}

fn interleave(rows: [&BlockQ4K; ROWS]) -> BlockQ4Kx8 {
    let mut block = BlockQ4Kx8::zeroed();
    for (r, row) in rows.iter().enumerate() {
        block.d[r] = row.d;
        block.dmin[r] = row.dmin;
        for run in 0..8 {
            let (scale, min) = scale_and_min(&row.scales, run);
            block.scales[run][r] = scale;
            block.mins[run / 2][2 * r + run % 2] = min;
        }
        for (chunk, bytes) in row.qs.chunks_exact(4).enumerate() {
            block.qs[32 * chunk + 4 * r..][..4].copy_from_slice(bytes);
        }
    }
    block
}

impl Stored for BlockQ4Kx8 {
    const VALUES: usize = SUPER * ROWS;

    /// The eight rows' values, row by row.
    fn dequantize(&self, out: &mut [f32]) {
        for (row, out) in out.chunks_exact_mut(SUPER).enumerate() {
            self.dequantize_row(row, out);
        }
    }
}

impl BlockQ4Kx8 {
    /// Row `row`'s 256 values.
    pub(crate) fn dequantize_row(&self, row: usize, out: &mut [f32]) {
        let half = |bytes: [u8; 2]| half::f16::from_le_bytes(bytes).to_f32();
        let (d, dmin) = (half(self.d[row]), half(self.dmin[row]));
        for (run, values) in out[..SUPER].chunks_exact_mut(32).enumerate() {
            let scale = d * f32::from(self.scales[run][row]);
            let offset = dmin * f32::from(self.mins[run / 2][2 * row + run % 2]);
            let shift = 4 * (run % 2);
            for (i, value) in values.iter_mut().enumerate() {
                // Value i of the run is byte 32 × (run / 2) + i of the row's own qs.
                let byte = 32 * (run / 2) + i;
                let code = (self.qs[32 * (byte / 4) + 4 * row + byte % 4] >> shift) & 0x0F;
                *value = scale * f32::from(code) - offset;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_of_a_group_keeps_its_values() {
        // Two groups of eight rows, two super-blocks each, every byte varied.
        let mut state = 12_345u32;
        let mut next = || {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 24) as u8
        };
        let blocks: Vec<BlockQ4K> = (0..32)
            .map(|_| {
                let mut block = BlockQ4K::zeroed();
                for byte in bytemuck::bytes_of_mut(&mut block) {
                    *byte = next();
                }
                block.d = half::f16::from_f32(0.01).to_le_bytes();
                block.dmin = half::f16::from_f32(0.003).to_le_bytes();
                block
            })
            .collect();
        let grouped = regroup(&blocks, 2);
        assert_eq!(grouped.len(), 4);
        let (mut theirs, mut ours) = ([0.0; SUPER], [0.0; SUPER]);
        for (index, block) in blocks.iter().enumerate() {
            let (row, at) = (index / 2, index % 2);
            block.dequantize(&mut theirs);
            grouped[(row / ROWS) * 2 + at].dequantize_row(row % ROWS, &mut ours);
            assert_eq!(ours.map(f32::to_bits), theirs.map(f32::to_bits), "row {row}, block {at}");
        }
    }
}
