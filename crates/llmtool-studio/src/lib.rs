//! The web studio's static files, built from `web/` by `node web/build.mjs` (esbuild) into
//! `assets/` and embedded here, so that `llmtool serve` needs no build step at run time.
//!
//! The table is written out (rather than generated) so that what ships is what is listed;
//! a test checks that it lists every file of `assets/` and nothing else.

/// A file of the studio: its bytes and media type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asset {
    pub bytes: &'static [u8],
    pub media_type: &'static str,
}

macro_rules! assets {
    ($($name:literal => $media_type:literal,)*) => {
        /// Every file of the studio, by name.
        pub const ASSETS: &[(&str, Asset)] = &[
            $(($name, Asset { bytes: include_bytes!(concat!("../assets/", $name)), media_type: $media_type }),)*
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
}
