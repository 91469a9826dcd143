//! [`Reference`]: how a tool in the library is named outside it, as `SLUG`, `SLUG@VERSION` or
//! `SLUG:LABEL`, and as a path (`registry:SLUG@VERSION`) wherever a tool file's path goes.

use crate::model::Selector;
use crate::publication::is_slug;

/// What a path starts with when it names a tool in the library rather than a file.
pub const PATH_PREFIX: &str = "registry:";

/// A tool in the library and which of its versions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub slug: String,
    pub selector: Selector,
}

impl Reference {
    /// `SLUG`, `SLUG@VERSION` or `SLUG:LABEL`; `None` for anything else.
    pub fn parse(text: &str) -> Option<Reference> {
        let (slug, selector) = match (text.split_once('@'), text.split_once(':')) {
            (Some((slug, number)), None) => (slug, Selector::Version(number.parse().ok()?)),
            (None, Some((slug, label))) => (slug, Selector::Label(label.to_owned())),
            (None, None) => (text, Selector::Latest),
            _ => return None,
        };
        is_slug(slug).then(|| Reference { slug: slug.to_owned(), selector })
    }

    /// Version `version` of `slug`.
    pub fn pinned(slug: &str, version: u32) -> Reference {
        Reference { slug: slug.to_owned(), selector: Selector::Version(version) }
    }

    /// The reference a path names (`registry:REFERENCE`): `None` when the path names a file,
    /// `Some(None)` when what follows the prefix is not a reference.
    pub fn from_path(path: &str) -> Option<Option<Reference>> {
        path.strip_prefix(PATH_PREFIX).map(Reference::parse)
    }

    /// The path that names this reference: `registry:REFERENCE`.
    pub fn path(&self) -> String {
        format!("{PATH_PREFIX}{self}")
    }

    /// The version number, when the reference names one.
    pub fn version(&self) -> Option<u32> {
        match self.selector {
            Selector::Version(number) => Some(number),
            _ => None,
        }
    }
}

impl std::fmt::Display for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.selector {
            Selector::Version(number) => write!(f, "{}@{number}", self.slug),
            Selector::Label(label) => write!(f, "{}:{label}", self.slug),
            Selector::Latest => f.write_str(&self.slug),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_read_back_as_they_are_written() {
        for text in ["tides", "tides@3", "tides:production"] {
            let reference = Reference::parse(text).unwrap();
            assert_eq!(reference.to_string(), text);
            assert_eq!(Reference::from_path(&reference.path()), Some(Some(reference)));
        }
        assert_eq!(Reference::parse("tides@3").unwrap().version(), Some(3));
        assert_eq!(Reference::parse("tides:production").unwrap().version(), None);
    }

    #[test]
    fn anything_else_is_not_a_reference() {
        for text in ["", "Tides", "tides@x", "tides@3:prod", "tides@-1", "../tides"] {
            assert_eq!(Reference::parse(text), None, "{text}");
        }
        assert_eq!(Reference::from_path("tides.json"), None);
        assert_eq!(Reference::from_path("registry:Bad Slug"), Some(None));
    }
}
