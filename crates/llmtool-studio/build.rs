//! Compresses each file of `assets/` with gzip (at its best level) into the build's output
//! folder, where the crate embeds it: the binary carries a quarter of the bytes, and the
//! server sends them as they are to every browser (all of them take gzip).

use std::io::Write as _;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let assets = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("assets");
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    println!("cargo:rerun-if-changed=assets");
    for entry in std::fs::read_dir(&assets)? {
        let path = entry?.path();
        println!("cargo:rerun-if-changed={}", path.display());
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else { continue };
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gzip.write_all(&std::fs::read(&path)?)?;
        std::fs::write(out.join(format!("{name}.gz")), gzip.finish()?)?;
    }
    Ok(())
}
