//! LT501: a timestamp that is not ISO 8601.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// `metadata.timestamp` is not an ISO 8601 / RFC 3339 date and time.
    ///
    /// Accepted: a full timestamp with offset (`2026-03-01T09:30:00Z`,
    /// `2026-03-01T09:30:00+01:00`), a date and time without offset, or a date alone.
    ///
    /// ```json
    /// "timestamp": "March 1st, 2026"
    /// ```
    pub static INVALID_TIMESTAMP = ("LT501", "invalid-timestamp", Error);
}

/// Whether `value` is an ISO 8601 timestamp, date-time or date.
pub fn is_iso8601(value: &str) -> bool {
    value.parse::<jiff::Timestamp>().is_ok()
        || value.parse::<jiff::civil::DateTime>().is_ok()
        || value.parse::<jiff::civil::Date>().is_ok()
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(timestamp) = cx.tool.metadata.as_ref().and_then(|m| m.timestamp.as_ref()) else {
        return;
    };
    if !is_iso8601(&timestamp.value) {
        out.push(
            Diagnostic::new(
                &INVALID_TIMESTAMP,
                format!("timestamp `{}` is not ISO 8601", timestamp.value),
            )
            .at(timestamp.span)
            .with_help("write it like `2026-03-01T09:30:00Z`"),
        );
    }
}
