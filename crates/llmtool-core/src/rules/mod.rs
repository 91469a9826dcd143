//! Every diagnostic code llmtool emits, and the registry the documentation is generated from.

mod declare;

pub use declare::Rule;

/// Every rule, in code order.
pub fn all() -> impl Iterator<Item = &'static Rule> {
    crate::syntax::codes::ALL.iter().copied()
}

/// The rule with this code (`LT001`) or name (`trailing-comma`).
pub fn find(code_or_name: &str) -> Option<&'static Rule> {
    all().find(|rule| rule.code.eq_ignore_ascii_case(code_or_name) || rule.name == code_or_name)
}
