//! Q6_K rows regrouped eight at a time, run by run: each run of sixteen values of the eight
//! rows is one 96-byte piece (two planes of low four bits, one of top two bits), so that a
//! kernel unpacks a run's codes with a few shifts and masks and scales them once.

use bytemuck::{Pod, Zeroable};

use super::{Grouped, ROWS};
use crate::llama::blocks::{BlockQ6K, SUPER};

/// Values in a run, which has a scale of its own.
const RUN: usize = 16;

/// One run of sixteen values of eight rows. Chunk `c` (0 to 3) of a run is its values
/// `4c..4c + 4` of each row, as byte `4 × row + i` for value `4c + i`.
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct RunQ6Kx8 {
    /// The codes' low four bits: `low[n]` holds chunk `n` in its low nibbles and chunk
    /// `n + 2` in its high nibbles.
    pub low: [[u8; 32]; 2],
    /// The codes' top two bits: chunk `c`'s in bits `2c` and `2c + 1`.
    pub high: [u8; 32],
}

/// One super-block (256 values) of eight rows of a Q6_K matrix: the same bytes as the eight
/// blocks it came from, in another order.
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub(crate) struct BlockQ6Kx8 {
    /// Each row's scale of scales (f16), row by row.
    pub d: [[u8; 2]; ROWS],
    /// `scales[pair][2 × row + k]`: the signed scale of run `2 × pair + k` of row `row`, so
    /// that 16 bytes widen to each row's two scales of a pair of runs.
    pub scales: [[i8; 2 * ROWS]; SUPER / RUN / 2],
    pub runs: [RunQ6Kx8; SUPER / RUN],
}

impl Grouped for BlockQ6Kx8 {
    type Source = BlockQ6K;

    fn interleave(rows: [&BlockQ6K; ROWS]) -> Self {
        let mut block = BlockQ6Kx8::zeroed();
        for (r, row) in rows.iter().enumerate() {
            block.d[r] = row.d;
            let codes: Vec<u8> = (0..SUPER / 32).flat_map(|k| row.codes(k)).collect();
            for (run, codes) in codes.chunks_exact(RUN).enumerate() {
                block.scales[run / 2][2 * r + run % 2] = row.scales[run];
                let piece = &mut block.runs[run];
                for (v, &code) in codes.iter().enumerate() {
                    let (chunk, i) = (v / 4, v % 4);
                    let at = 4 * r + i;
                    piece.low[chunk % 2][at] |= (code & 0x0F) << (4 * (chunk / 2));
                    piece.high[at] |= (code >> 4) << (2 * chunk);
                }
            }
        }
        block
    }

    fn dequantize_row(&self, row: usize, out: &mut [f32]) {
        let d = half::f16::from_le_bytes(self.d[row]).to_f32();
        for (run, values) in out[..SUPER].chunks_exact_mut(RUN).enumerate() {
            let scale = f32::from(self.scales[run / 2][2 * row + run % 2]);
            let piece = &self.runs[run];
            for (v, value) in values.iter_mut().enumerate() {
                let (chunk, at) = (v / 4, 4 * row + v % 4);
                let low = (piece.low[chunk % 2][at] >> (4 * (chunk / 2))) & 0x0F;
                let high = (piece.high[at] >> (2 * chunk)) & 3;
                *value = d * scale * (f32::from(low | (high << 4)) - 32.0);
            }
        }
    }
}
