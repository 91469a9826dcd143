//! Files a source names beside itself, such as Prompty's `inputs: ${file:schema.json}`. The
//! core reads no files: whoever reads the source says how to reach its folder, and the rule for
//! which names may be followed is kept here, for every caller.

/// How an import reaches a file that its source names relative to the source's own folder.
pub trait SiblingFiles {
    /// The text of the file `name` (written as in the source), or why it cannot be had.
    fn read(&self, name: &str) -> Result<String, String>;
}

/// A source that has no folder (standard input, an editor's buffer, a request's body): no
/// file it names can be reached.
#[derive(Debug)]
pub struct NoFolder;

impl SiblingFiles for NoFolder {
    fn read(&self, name: &str) -> Result<String, String> {
        Err(format!(
            "`{name}` is named relative to the source's folder, and this source was not read from a file"
        ))
    }
}

/// Why `name` may not be followed from a source's folder, if it may not: it must stay inside
/// that folder, so it is relative, has no `..` step, and names a file, not the folder itself.
/// Links that lead out of the folder are the reader's to refuse (it sees the file system).
pub fn outside_folder(name: &str) -> Option<String> {
    let steps: Vec<&str> = name.split(['/', '\\']).collect();
    let absolute = name.starts_with(['/', '\\']) || name.get(1..2) == Some(":");
    if name.trim().is_empty() || absolute {
        return Some(format!("`{name}` is not a file name relative to the source's folder"));
    }
    if steps.contains(&"..") {
        return Some(format!("`{name}` leads out of the source's folder (`..`)"));
    }
    if steps.last().is_none_or(|last| last.is_empty() || *last == ".") {
        return Some(format!("`{name}` names a folder, not a file"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_inside_the_folder_may_be_followed() {
        for inside in ["schema.json", "shared/schema.json", "./schema.json", "a b.yaml"] {
            assert_eq!(outside_folder(inside), None, "{inside}");
        }
        for outside in ["", " ", "/etc/passwd", "\\x", "C:/x", "../x.json", "a/../../x", "a/", "."]
        {
            assert!(outside_folder(outside).is_some(), "{outside:?}");
        }
    }

    #[test]
    fn a_source_with_no_folder_reaches_no_file() {
        assert!(NoFolder.read("schema.json").unwrap_err().contains("not read from a file"));
    }
}
