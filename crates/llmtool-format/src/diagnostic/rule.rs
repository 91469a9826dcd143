//! The `Rule` descriptor and the `declare_rule!` macro that builds one from a doc comment.

use crate::diagnostic::Severity;

/// A diagnostic code with its default severity and documentation.
///
/// Every diagnostic llmtool can emit has one, declared with [`declare_rule!`](crate::declare_rule)
/// next to the code that emits it. The doc comment becomes [`Rule::doc`], from which
/// `docs/diagnostics.md` is generated. Every rule is listed once, in `rules::ALL`.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    /// Stable code, e.g. `LT001`. Never reused once published.
    pub code: &'static str,
    /// Stable kebab-case name, e.g. `trailing-comma`.
    pub name: &'static str,
    pub severity: Severity,
    /// The doc comment, one line per `///` line (each still starting with its space).
    pub doc: &'static str,
}

impl Rule {
    /// The first paragraph of the documentation, on one line: a one-sentence summary.
    pub fn summary(&self) -> String {
        let lines: Vec<&str> =
            self.doc.lines().map(str::trim).take_while(|l| !l.is_empty()).collect();
        lines.join(" ")
    }

    /// The documentation as Markdown, with the leading space of each doc line removed.
    pub fn doc_markdown(&self) -> String {
        let mut out = String::with_capacity(self.doc.len());
        for line in self.doc.lines() {
            out.push_str(line.strip_prefix(' ').unwrap_or(line));
            out.push('\n');
        }
        out
    }
}

/// Declares a `static` [`Rule`] whose documentation is the doc comment written above it.
///
/// ```ignore
/// declare_rule! {
///     /// What the rule checks, in one sentence.
///     pub static TRAILING_COMMA = ("LT001", "trailing-comma", Error);
/// }
/// ```
#[macro_export]
macro_rules! declare_rule {
    ($(#[doc = $doc:literal])* $vis:vis static $ident:ident = ($code:literal, $name:literal, $severity:ident);) => {
        $(#[doc = $doc])*
        $vis static $ident: $crate::diagnostic::Rule = $crate::diagnostic::Rule {
            code: $code,
            name: $name,
            severity: $crate::diagnostic::Severity::$severity,
            doc: concat!($($doc, "\n"),*),
        };
    };
}
