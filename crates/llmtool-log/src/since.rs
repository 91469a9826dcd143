//! [`since`]: how a user says "runs from then on" (`llmtool logs --since`, `llmtool usage
//! --since`, the server's `GET /usage?since=`), read one way everywhere.

/// Why a `since` is not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SinceError {
    #[error("a span ends with m, h or d (`7d`)")]
    Unit,
    #[error(
        "not a date (2026-11-01), a time with its offset (2026-11-01T09:00:00Z) or a span (7d)"
    )]
    NotATime,
}

/// `text` as the log writes times ([`crate::time_text`], UTC, so that text order is time
/// order): a date (`2026-11-01`, its midnight in UTC), a time with its offset
/// (`2026-11-01T09:00:00+02:00`), or a span back from `now` (`30m`, `24h`, `7d`).
pub fn since(text: &str, now: jiff::Timestamp) -> Result<String, SinceError> {
    let text = text.trim();
    if let Some((number, unit)) = text
        .len()
        .checked_sub(1)
        .and_then(|at| text.is_char_boundary(at).then(|| text.split_at(at)))
        && let Ok(number) = number.parse::<i64>()
    {
        let span = match unit {
            "m" => jiff::Span::new().try_minutes(number),
            "h" => jiff::Span::new().try_hours(number),
            "d" => jiff::Span::new().try_hours(number.saturating_mul(24)),
            _ => return Err(SinceError::Unit),
        };
        let time = span.and_then(|span| now.checked_sub(span)).map_err(|_| SinceError::NotATime)?;
        return Ok(crate::time_text(time));
    }
    if let Ok(time) = text.parse::<jiff::Timestamp>() {
        return Ok(crate::time_text(time));
    }
    let date: jiff::civil::Date = text.parse().map_err(|_| SinceError::NotATime)?;
    let midnight = date.to_zoned(jiff::tz::TimeZone::UTC).map_err(|_| SinceError::NotATime)?;
    Ok(crate::time_text(midnight.timestamp()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_times_and_spans_are_read_as_utc() {
        let now: jiff::Timestamp = "2026-11-25T12:00:00Z".parse().unwrap_or_default();
        assert_eq!(since("2026-11-01", now).as_deref(), Ok("2026-11-01T00:00:00.000Z"));
        assert_eq!(
            since("2026-11-01T09:30:00+02:00", now).as_deref(),
            Ok("2026-11-01T07:30:00.000Z")
        );
        assert_eq!(since("7d", now).as_deref(), Ok("2026-11-18T12:00:00.000Z"));
        assert_eq!(since("24h", now).as_deref(), Ok("2026-11-24T12:00:00.000Z"));
        assert_eq!(since(" 30m ", now).as_deref(), Ok("2026-11-25T11:30:00.000Z"));
    }

    #[test]
    fn anything_else_is_a_typed_error_never_a_panic() {
        let now = jiff::Timestamp::UNIX_EPOCH;
        assert_eq!(since("7w", now), Err(SinceError::Unit));
        for text in ["yesterday", "", "é", "9223372036854775807d", "99999999999m", "2026-13-01"] {
            assert!(since(text, now).is_err(), "{text}");
        }
    }
}
