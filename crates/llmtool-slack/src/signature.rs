//! Slack's request signatures: `X-Slack-Signature` is `v0=` and the hex HMAC-SHA256, under
//! the app's signing secret, of `v0:TIMESTAMP:BODY` (the raw body, as received), where
//! `X-Slack-Request-Timestamp` is the time Slack sent it. A request is taken only when the
//! signature matches (compared in constant time) and the time is within five minutes of now,
//! so that a request seen once cannot be sent again later.

use hmac::{Hmac, KeyInit as _, Mac as _};
use sha2::Sha256;

/// The header that carries the signature.
pub const SIGNATURE_HEADER: &str = "x-slack-signature";
/// The header that carries the time Slack signed the request, in Unix seconds.
pub const TIMESTAMP_HEADER: &str = "x-slack-request-timestamp";
/// How far the request's time may be from now, either way.
pub const TOLERANCE_SECONDS: i64 = 5 * 60;

/// Checks requests against an app's signing secret.
#[derive(Clone)]
pub struct Verifier {
    secret: Vec<u8>,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret.
        f.debug_struct("Verifier").finish_non_exhaustive()
    }
}

/// Why a request was not taken (the server answers 401, and logs this, never the body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("no Slack signature or timestamp")]
    Unsigned,
    #[error("the request's timestamp is not a time")]
    BadTimestamp,
    #[error("the request was signed more than five minutes from now")]
    Stale,
    #[error("the signature does not match the request")]
    Mismatch,
}

impl Verifier {
    pub fn new(signing_secret: &str) -> Verifier {
        Verifier { secret: signing_secret.trim().as_bytes().to_vec() }
    }

    /// Whether `body`, with the headers' `timestamp` and `signature`, was signed with the
    /// secret at a time within [`TOLERANCE_SECONDS`] of `now` (Unix seconds).
    pub fn verify(
        &self,
        timestamp: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
        now: i64,
    ) -> Result<(), Refusal> {
        let (Some(timestamp), Some(signature)) = (timestamp, signature) else {
            return Err(Refusal::Unsigned);
        };
        let sent: i64 = timestamp.trim().parse().map_err(|_| Refusal::BadTimestamp)?;
        if now.abs_diff(sent) > TOLERANCE_SECONDS.unsigned_abs() {
            return Err(Refusal::Stale);
        }
        let given = signature
            .trim()
            .strip_prefix("v0=")
            .and_then(|hex_text| hex::decode(hex_text).ok())
            .ok_or(Refusal::Mismatch)?;
        self.mac(timestamp.trim(), body).verify_slice(&given).map_err(|_| Refusal::Mismatch)
    }

    /// The `X-Slack-Signature` of `body` sent at `timestamp` (what Slack would send).
    pub fn sign(&self, timestamp: &str, body: &[u8]) -> String {
        format!("v0={}", hex::encode(self.mac(timestamp, body).finalize().into_bytes()))
    }

    fn mac(&self, timestamp: &str, body: &[u8]) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256>>::new_from_slice(&self.secret)
            .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
        mac.update(b"v0:");
        mac.update(timestamp.as_bytes());
        mac.update(b":");
        mac.update(body);
        mac
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of Slack's documentation on verifying requests.
    const SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5";
    const BODY: &str = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
    const TIMESTAMP: &str = "1531420618";
    const SIGNATURE: &str = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";

    #[test]
    fn slacks_documented_example_verifies() {
        let verifier = Verifier::new(SECRET);
        assert_eq!(verifier.sign(TIMESTAMP, BODY.as_bytes()), SIGNATURE);
        let now = 1_531_420_618 + 60;
        assert_eq!(verifier.verify(Some(TIMESTAMP), Some(SIGNATURE), BODY.as_bytes(), now), Ok(()));
    }

    #[test]
    fn a_changed_body_an_old_time_or_no_signature_is_refused() {
        let verifier = Verifier::new(SECRET);
        let now = 1_531_420_618;
        let changed = BODY.replace("roadrunner", "coyote");
        let verify = |timestamp, signature, body: &str, now| {
            verifier.verify(timestamp, signature, body.as_bytes(), now)
        };
        assert_eq!(verify(Some(TIMESTAMP), Some(SIGNATURE), &changed, now), Err(Refusal::Mismatch));
        assert_eq!(verify(Some(TIMESTAMP), Some(SIGNATURE), BODY, now + 301), Err(Refusal::Stale));
        assert_eq!(verify(Some(TIMESTAMP), Some(SIGNATURE), BODY, now - 301), Err(Refusal::Stale));
        assert_eq!(verify(None, Some(SIGNATURE), BODY, now), Err(Refusal::Unsigned));
        assert_eq!(verify(Some("soon"), Some(SIGNATURE), BODY, now), Err(Refusal::BadTimestamp));
        assert_eq!(verify(Some(TIMESTAMP), Some("v0=zz"), BODY, now), Err(Refusal::Mismatch));
        assert_eq!(verify(Some(TIMESTAMP), Some("v1=00"), BODY, now), Err(Refusal::Mismatch));
        let other = Verifier::new("another secret");
        assert_eq!(
            other.verify(Some(TIMESTAMP), Some(SIGNATURE), BODY.as_bytes(), now),
            Err(Refusal::Mismatch)
        );
    }
}
