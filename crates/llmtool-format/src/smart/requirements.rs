//! A smart tool's `requirements`: each a PEP 508 requirement naming a package on PyPI. Only a
//! name pinned to one version (`name==1.2.3`) can be fetched reproducibly; a URL, a path or a
//! pip option is never followed.

use std::str::FromStr;

use pep508_rs::pep440_rs::Operator;
use pep508_rs::{Requirement as Pep508, VersionOrUrl};

/// One line of `requirements`, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    /// `name==version`: the one form a run installs.
    Pinned { name: String, version: String },
    /// A name with no exact version (`requests`, `requests>=2`).
    Unpinned { name: String },
    /// Not something to fetch from PyPI: why.
    Refused { reason: String },
}

impl Requirement {
    /// Reads one requirement as written.
    pub fn read(text: &str) -> Requirement {
        let text = text.trim();
        if text.starts_with('-') {
            return Requirement::Refused {
                reason: "a pip option is not a requirement; name a package, such as `name==1.0`"
                    .into(),
            };
        }
        if text.contains("://") || text.starts_with(['.', '/', '~']) || text.starts_with("git+") {
            return Requirement::Refused {
                reason:
                    "a URL or a path is never fetched; name a package on PyPI, such as `name==1.0`"
                        .into(),
            };
        }
        let parsed = match Pep508::<url::Url>::from_str(text) {
            Ok(parsed) => parsed,
            Err(error) => {
                return Requirement::Refused {
                    reason: format!("not a requirement: {}", error.message),
                };
            }
        };
        let name = parsed.name.to_string();
        match parsed.version_or_url {
            Some(VersionOrUrl::Url(_)) => Requirement::Refused {
                reason: format!("`{name} @ URL` is never fetched; pin a version from PyPI instead"),
            },
            Some(VersionOrUrl::VersionSpecifier(specifiers)) => {
                let exact = match &*specifiers {
                    [only] if matches!(only.operator(), Operator::Equal | Operator::ExactEqual) => {
                        Some(only.version().to_string())
                    }
                    _ => None,
                };
                match exact {
                    Some(version) => Requirement::Pinned { name, version },
                    None => Requirement::Unpinned { name },
                }
            }
            None => Requirement::Unpinned { name },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_are_read() {
        assert_eq!(
            Requirement::read("Markdown==3.7"),
            Requirement::Pinned { name: "markdown".into(), version: "3.7".into() }
        );
        assert_eq!(
            Requirement::read("requests"),
            Requirement::Unpinned { name: "requests".into() }
        );
        assert_eq!(
            Requirement::read("requests>=2,<3"),
            Requirement::Unpinned { name: "requests".into() }
        );
        assert_eq!(Requirement::read("numpy==2.*"), Requirement::Unpinned { name: "numpy".into() });
        for refused in [
            "https://evil.example/pkg.whl",
            "pkg @ https://evil.example/pkg.whl",
            "git+https://example.org/repo",
            "./local",
            "-e .",
            "--index-url https://x",
            "not a requirement!",
        ] {
            assert!(matches!(Requirement::read(refused), Requirement::Refused { .. }), "{refused}");
        }
    }
}
