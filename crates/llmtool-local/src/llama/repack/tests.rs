//! Every regrouped format gives each row's values back exactly.

use bytemuck::Zeroable;

use super::*;

/// Two groups of eight rows, two blocks each, of `G::Source` blocks whose every byte varies
/// (but for the f16 scales and minimums, at `scales`, kept finite), regrouped and read back.
fn every_row_keeps_its_values<G: Grouped>(scales: &[usize]) {
    let mut state = 12_345u32;
    let mut next = || {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (state >> 24) as u8
    };
    let blocks: Vec<G::Source> = (0..32)
        .map(|_| {
            let mut block = G::Source::zeroed();
            let bytes = bytemuck::bytes_of_mut(&mut block);
            for byte in bytes.iter_mut() {
                *byte = next();
            }
            for &at in scales {
                let scale = 0.001 + f32::from(next()) / 1000.0;
                bytes[at..at + 2].copy_from_slice(&half::f16::from_f32(scale).to_le_bytes());
            }
            block
        })
        .collect();
    let mut grouped = vec![G::zeroed(); blocks.len() / ROWS];
    regroup::<G>(&blocks, 2, &mut grouped);
    assert_eq!(grouped.len(), 4);
    // The formats keep their sources' size but Q4_K, whose scales, unpacked, take 32 bytes
    // more a group.
    let grown = size_of::<G>() - ROWS * size_of::<G::Source>();
    assert_eq!(grown, if size_of::<G>() == size_of::<BlockQ4Kx8>() { 32 } else { 0 });
    let values = <G::Source as Stored>::VALUES;
    let (mut theirs, mut ours) = (vec![0.0; values], vec![0.0; values]);
    for (index, block) in blocks.iter().enumerate() {
        let (row, at) = (index / 2, index % 2);
        block.dequantize(&mut theirs);
        grouped[(row / ROWS) * 2 + at].dequantize_row(row % ROWS, &mut ours);
        let bits = |values: &[f32]| values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&ours), bits(&theirs), "row {row}, block {at}");
    }
}

#[test]
fn every_row_of_a_group_keeps_its_values() {
    every_row_keeps_its_values::<BlockQ4Kx8>(&[0, 2]);
    every_row_keeps_its_values::<BlockQ6Kx8>(&[208]);
    every_row_keeps_its_values::<BlockQ4_0x8>(&[0]);
    every_row_keeps_its_values::<BlockQ4_1x8>(&[0, 2]);
    every_row_keeps_its_values::<BlockQ5_0x8>(&[0]);
    every_row_keeps_its_values::<BlockQ5_1x8>(&[0, 2]);
    every_row_keeps_its_values::<BlockQ8_0x8>(&[0]);
}

#[test]
fn a_fifth_bit_plane_holds_each_bit_where_its_code_is() {
    // Row 3's code 16 + 4 × 2 + 1 = 25 has its fifth bit: the high nibble of chunk 2, byte
    // 4 × 3 + 1, bit 4 + 2.
    let mut qh = [[0u8; 4]; ROWS];
    qh[3] = (1u32 << 25).to_le_bytes();
    let plane = blocks32::fifth_bit_plane(qh);
    let mut expected = [0u8; 32];
    expected[13] = 1 << 6;
    assert_eq!(plane, expected);
}
