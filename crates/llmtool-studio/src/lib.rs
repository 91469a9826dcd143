//! The web studio's static files, built from `web/` by `node web/build.mjs` (esbuild) into
//! `assets/` and embedded here, so that `llmtool serve` needs no build step at run time.
//!
//! The table is written out (rather than generated) so that what ships is what is listed;
//! a test checks that it lists every file of `assets/` and nothing else. Each file is embedded
//! compressed (gzip, by `build.rs`): a quarter of the bytes in the binary, sent as they are to
//! a client that takes gzip, and inflated for one that does not.

use std::io::Read as _;

/// A file of the studio: its bytes, compressed with gzip, and its media type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asset {
    pub gzip: &'static [u8],
    pub media_type: &'static str,
}

impl Asset {
    /// The file itself, inflated.
    pub fn bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        // The build compressed it: it inflates whole, or the binary is not the one built.
        let inflated = flate2::read::GzDecoder::new(self.gzip).read_to_end(&mut bytes);
        debug_assert!(inflated.is_ok(), "an embedded asset inflates");
        bytes
    }
}

macro_rules! assets {
    ($($name:literal => $media_type:literal,)*) => {
        /// Every file of the studio, by name.
        pub const ASSETS: &[(&str, Asset)] = &[
            $(($name, Asset {
                gzip: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".gz")),
                media_type: $media_type,
            }),)*
        ];
    };
}

assets! {
    "index.html" => "text/html; charset=utf-8",
    "tool.html" => "text/html; charset=utf-8",
    "edit.html" => "text/html; charset=utf-8",
    "signin.html" => "text/html; charset=utf-8",
    "missing.html" => "text/html; charset=utf-8",
    "admins.html" => "text/html; charset=utf-8",
    "invite.html" => "text/html; charset=utf-8",
    "people.html" => "text/html; charset=utf-8",
    "teams.html" => "text/html; charset=utf-8",
    "integrations.html" => "text/html; charset=utf-8",
    "prices.html" => "text/html; charset=utf-8",
    "spend.html" => "text/html; charset=utf-8",
    "budgets.html" => "text/html; charset=utf-8",
    "audit.html" => "text/html; charset=utf-8",
    "share.html" => "text/html; charset=utf-8",
    "conversation.html" => "text/html; charset=utf-8",
    "join.html" => "text/html; charset=utf-8",
    "snapshot.html" => "text/html; charset=utf-8",
    "tokens.html" => "text/html; charset=utf-8",
    "device.html" => "text/html; charset=utf-8",
    "curate.html" => "text/html; charset=utf-8",
    "gallery.js" => "text/javascript; charset=utf-8",
    "tool.js" => "text/javascript; charset=utf-8",
    "editor.js" => "text/javascript; charset=utf-8",
    "signin.js" => "text/javascript; charset=utf-8",
    "invite.js" => "text/javascript; charset=utf-8",
    "people.js" => "text/javascript; charset=utf-8",
    "teams.js" => "text/javascript; charset=utf-8",
    "integrations.js" => "text/javascript; charset=utf-8",
    "prices.js" => "text/javascript; charset=utf-8",
    "spend.js" => "text/javascript; charset=utf-8",
    "budgets.js" => "text/javascript; charset=utf-8",
    "audit.js" => "text/javascript; charset=utf-8",
    "share.js" => "text/javascript; charset=utf-8",
    "conversation.js" => "text/javascript; charset=utf-8",
    "join.js" => "text/javascript; charset=utf-8",
    "snapshot.js" => "text/javascript; charset=utf-8",
    "tokens.js" => "text/javascript; charset=utf-8",
    "device.js" => "text/javascript; charset=utf-8",
    "curate.js" => "text/javascript; charset=utf-8",
    "studio.css" => "text/css; charset=utf-8",
    "THIRD-PARTY-LICENSES.txt" => "text/plain; charset=utf-8",
}

/// The file called `name`, if the studio has one.
pub fn asset(name: &str) -> Option<Asset> {
    ASSETS.iter().find(|(known, _)| *known == name).map(|(_, asset)| *asset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lists_every_built_file_and_nothing_else() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
        let mut built: Vec<String> = std::fs::read_dir(folder)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        built.sort();
        let mut listed: Vec<String> = ASSETS.iter().map(|(name, _)| (*name).to_owned()).collect();
        listed.sort();
        assert_eq!(built, listed);
        assert!(asset("index.html").is_some_and(|a| a.media_type.starts_with("text/html")));
        assert!(asset("../Cargo.toml").is_none());
    }

    #[test]
    fn each_file_inflates_to_what_the_build_wrote() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
        for (name, asset) in ASSETS {
            let written = std::fs::read(folder.join(name)).unwrap_or_default();
            assert_eq!(asset.bytes(), written, "{name}");
            assert!(asset.gzip.len() < written.len().max(64), "{name} is smaller compressed");
        }
    }
}
