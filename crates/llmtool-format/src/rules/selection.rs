//! Which rules a check reports: `--select` and `--ignore` (and the config file's `[check]`
//! table), each a rule's code (`LT215`), a prefix of codes (`LT2`: every variable rule) or a
//! rule's name (`missing-variable-description`). Problems that keep a file from being read
//! (`LT0xx`) are always reported: a file that is not JSON has nothing else to check.

use crate::diagnostic::{Diagnostic, Rule};
use crate::suggest::closest;
use crate::syntax::codes;

/// The rules kept: those selected (every rule when none is), minus those ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    select: Vec<String>,
    ignore: Vec<String>,
}

impl Selection {
    /// The selection of `select` and `ignore`, or why a pattern names no rule (with the
    /// nearest rule, when one is near).
    pub fn new(select: &[String], ignore: &[String]) -> Result<Selection, String> {
        for pattern in select.iter().chain(ignore) {
            if !super::ALL.iter().any(|rule| matches(pattern, rule)) {
                let names = super::ALL.iter().flat_map(|rule| [rule.code, rule.name]);
                let near = closest(pattern, names)
                    .map(|near| format!("; did you mean `{near}`?"))
                    .unwrap_or_default();
                return Err(format!("`{pattern}` names no rule (see docs/diagnostics.md){near}"));
            }
        }
        Ok(Selection { select: select.to_vec(), ignore: ignore.to_vec() })
    }

    /// Whether `rule`'s problems are reported.
    pub fn keeps(&self, rule: &Rule) -> bool {
        if codes::is_syntax(rule) {
            return true;
        }
        let selected = self.select.is_empty() || self.select.iter().any(|p| matches(p, rule));
        selected && !self.ignore.iter().any(|p| matches(p, rule))
    }

    /// `diagnostics` without the ones of rules left out.
    pub fn apply(&self, diagnostics: &mut Vec<Diagnostic>) {
        diagnostics.retain(|diagnostic| self.keeps(diagnostic.rule));
    }
}

/// Whether `pattern` (a code, a prefix of codes, or a name) names `rule`.
fn matches(pattern: &str, rule: &Rule) -> bool {
    let pattern = pattern.trim();
    let is_code =
        pattern.len() >= 3 && pattern.get(..2).is_some_and(|lt| lt.eq_ignore_ascii_case("LT"));
    if is_code {
        return rule.code.len() >= pattern.len()
            && rule.code[..pattern.len()].eq_ignore_ascii_case(pattern);
    }
    rule.name.eq_ignore_ascii_case(pattern)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(code: &str) -> &'static Rule {
        crate::rules::ALL.iter().find(|rule| rule.code == code).copied().unwrap_or_else(|| {
            panic!("no rule {code}");
        })
    }

    #[test]
    fn codes_prefixes_and_names_select_and_ignore() {
        let none = Selection::default();
        assert!(none.keeps(rule("LT215")));
        let ignore = Selection::new(&[], &["LT215".into(), "unused-variable".into()]).unwrap();
        assert!(!ignore.keeps(rule("LT215")));
        assert!(
            !ignore.keeps(crate::rules::ALL.iter().find(|r| r.name == "unused-variable").unwrap())
        );
        assert!(ignore.keeps(rule("LT105")));
        let variables = Selection::new(&["lt2".into()], &["LT215".into()]).unwrap();
        assert!(variables.keeps(rule("LT204")) && !variables.keeps(rule("LT105")));
        assert!(!variables.keeps(rule("LT215")), "ignore wins over select");
        // A file that cannot be read is always said.
        let nothing = Selection::new(&["LT215".into()], &["LT0".into()]).unwrap();
        assert!(nothing.keeps(rule("LT001")));
    }

    #[test]
    fn a_pattern_that_names_no_rule_is_refused_with_the_nearest() {
        let error = Selection::new(&[], &["LT2155".into()]).unwrap_err();
        assert!(error.contains("`LT2155` names no rule"), "{error}");
        // Any text, whatever its script, is read without a panic.
        for odd in ["€", "Lé", "€€€", "ＬＴ２"] {
            assert!(Selection::new(&[odd.into()], &[]).is_err(), "{odd}");
        }
        let error = Selection::new(&[], &["unused-variabel".into()]).unwrap_err();
        assert!(error.contains("did you mean `unused-variable`?"), "{error}");
    }
}
