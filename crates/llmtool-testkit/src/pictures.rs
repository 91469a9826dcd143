//! Real pictures for tests of image tools: what the mock's images API answers with.

/// A PNG of `width` x `height` made by the `png` crate: a gradient, so that it is a real
/// picture, not a blank (empty when the `png` crate refuses the size).
pub fn png(width: u32, height: u32) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, width, height);
    encoder.set_color(png::ColorType::Rgb);
    let mut pixels = Vec::with_capacity((width * height * 3) as usize);
    for y in 0..height {
        for x in 0..width {
            pixels.extend([(x * 255 / width) as u8, (y * 255 / height) as u8, 128]);
        }
    }
    let written = encoder.write_header().and_then(|mut writer| writer.write_image_data(&pixels));
    if written.is_err() {
        bytes.clear();
    }
    bytes
}
