//! Q4_K rows regrouped eight at a time: a super-block's 6-bit scales and minimums unpacked
//! row by row, its codes interleaved four bytes at a time.

use bytemuck::{Pod, Zeroable};

use super::{Grouped, ROWS, interleave_words};
use crate::llama::blocks::{BlockQ4K, SUPER, scale_and_min};

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

impl Grouped for BlockQ4Kx8 {
    type Source = BlockQ4K;

    fn interleave(rows: [&BlockQ4K; ROWS]) -> Self {
        let mut block = BlockQ4Kx8::zeroed();
        for (r, row) in rows.iter().enumerate() {
            block.d[r] = row.d;
            block.dmin[r] = row.dmin;
            for run in 0..8 {
                let (scale, min) = scale_and_min(&row.scales, run);
                block.scales[run][r] = scale;
                block.mins[run / 2][2 * r + run % 2] = min;
            }
        }
        interleave_words(rows.map(|row| &row.qs[..]), &mut block.qs);
        block
    }

    fn dequantize_row(&self, row: usize, out: &mut [f32]) {
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
