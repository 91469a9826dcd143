//! The built-in kinds: each a pattern that finds candidates and a check that keeps the real
//! ones (a checksum, a numbering plan, a parse). Patterns are ASCII (`\d` is 0-9, `\b` an
//! ASCII word boundary), as the scanner compiles them with Unicode off.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::ops::Range;

use iban::Iban;
use regex::bytes::Captures;
use rlibphonenumber::{PHONE_NUMBER_UTIL, Region};

use crate::checksums::{self, digits};
use crate::kind::{Confidence, Kind};

/// What the checks need besides the text: the config's phone regions.
#[derive(Debug)]
pub(crate) struct Context {
    pub(crate) regions: Vec<Region>,
}

/// A check: given the text and a candidate's captures, the span of the value (often the
/// whole match) and how sure it is, or `None` to drop the candidate.
type Check = fn(&Context, &str, &Captures<'_>) -> Option<(Range<usize>, Confidence)>;

/// One built-in kind's pattern and check.
pub(crate) struct BuiltIn {
    pub(crate) kind: Kind,
    pub(crate) pattern: &'static str,
    /// Words that, shortly before a candidate, make it likelier (as "NHS" before a number
    /// that is also a valid phone number).
    pub(crate) context: &'static [&'static str],
    pub(crate) check: Check,
}

impl std::fmt::Debug for BuiltIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltIn").field("kind", &self.kind).finish_non_exhaustive()
    }
}

/// The built-in kinds but secrets, which have rules of their own (see `secrets`).
pub(crate) const BUILT_IN: &[BuiltIn] = &[
    BuiltIn {
        kind: Kind::Email,
        pattern: r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,24}\b",
        context: &[],
        check: email,
    },
    BuiltIn {
        kind: Kind::Phone,
        pattern: r"(?:\+\d{1,3}[ .\-]?)?(?:\(\d{1,4}\)[ .\-]?)?\d{1,4}(?:[ .\-]?\d{1,4}){2,5}(?:[ ]?(?:x|ext\.?)[ ]?\d{1,6})?",
        context: &[
            "phone",
            "tel",
            "call",
            "mobile",
            "cell",
            "fax",
            "whatsapp",
            "전화",
            "teléfono",
            "telefone",
        ],
        check: phone,
    },
    BuiltIn {
        kind: Kind::PaymentCard,
        pattern: r"\b(?:\d[ \-]?){12,18}\d\b",
        context: &["card", "visa", "mastercard", "amex", "credit", "debit"],
        check: card,
    },
    BuiltIn {
        kind: Kind::Iban,
        pattern: r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{1,4}){3,8}\b",
        context: &["iban", "account", "bank"],
        check: iban,
    },
    BuiltIn {
        kind: Kind::UsSsn,
        pattern: r"\b\d{3}[\- .]\d{2}[\- .]\d{4}\b",
        context: &["ssn", "social security"],
        check: us_ssn,
    },
    BuiltIn {
        kind: Kind::UkNhs,
        pattern: r"\b\d{3}[ \-]?\d{3}[ \-]?\d{4}\b",
        context: &["nhs"],
        check: uk_nhs,
    },
    BuiltIn {
        kind: Kind::InAadhaar,
        pattern: r"\b[2-9]\d{3}[ \-]?\d{4}[ \-]?\d{4}\b",
        context: &["aadhaar", "aadhar", "uidai"],
        check: aadhaar,
    },
    BuiltIn {
        kind: Kind::EsDni,
        pattern: r"\b(?:\d{8}|[XYZ]\d{7})-?[A-Z]\b",
        context: &["dni", "nie", "nif"],
        check: spanish_id,
    },
    BuiltIn {
        kind: Kind::BrCpf,
        pattern: r"\b\d{3}\.\d{3}\.\d{3}-\d{2}\b",
        context: &["cpf"],
        check: cpf,
    },
    BuiltIn {
        kind: Kind::KrRrn,
        pattern: r"\b\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])-?[1-8]\d{6}\b",
        context: &["주민", "rrn", "resident registration"],
        check: korean_rrn,
    },
    BuiltIn {
        kind: Kind::IpAddress,
        pattern: r"\b(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}\b",
        context: &["ip", "host", "server", "address"],
        check: ipv4,
    },
    BuiltIn {
        kind: Kind::IpAddress,
        pattern: r"(?i)[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}(?:\.\d{1,3}){0,3}",
        context: &["ip", "host", "server", "address"],
        check: ipv6,
    },
    BuiltIn {
        kind: Kind::UrlCredentials,
        pattern: r"(?i)\b[a-z][a-z0-9+.\-]{1,15}://([^\s/?#@:]{1,256}):([^\s/?#@]{1,256})@[a-z0-9\[]",
        context: &[],
        check: url_credentials,
    },
    BuiltIn {
        kind: Kind::PrivateKey,
        pattern: r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----",
        context: &[],
        check: private_key,
    },
];

/// How far before a candidate its context words count, in bytes.
const CONTEXT_REACH: usize = 48;

impl BuiltIn {
    /// Whether one of the kind's context words is shortly before `start` in `text`.
    pub(crate) fn has_context(&self, text: &str, start: usize) -> bool {
        if self.context.is_empty() {
            return false;
        }
        let mut from = start.saturating_sub(CONTEXT_REACH);
        while !text.is_char_boundary(from) {
            from += 1;
        }
        let window = text[from..start].to_lowercase();
        self.context.iter().any(|word| window.contains(word))
    }
}

/// The whole match's span.
fn whole(captures: &Captures<'_>) -> Range<usize> {
    captures.get(0).map_or(0..0, |m| m.range())
}

/// Whether `span` stands alone in `text`: no letter or digit touching it, and no joining mark
/// (`+ - . : /`) with a digit beyond it, so that it is not the middle of a longer code, a
/// decimal or a time.
fn alone(text: &str, span: &Range<usize>) -> bool {
    let bytes = text.as_bytes();
    let word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    let joining = |b: &u8| matches!(b, b'+' | b'-' | b'.' | b':' | b'/');
    let at = |i: Option<usize>| i.and_then(|i| bytes.get(i));
    let side_ok = |near: Option<&u8>, beyond: Option<&u8>| match near {
        None => true,
        Some(b) if word(b) => false,
        Some(b) => !(joining(b) && beyond.is_some_and(u8::is_ascii_digit)),
    };
    side_ok(at(span.start.checked_sub(1)), at(span.start.checked_sub(2)))
        && side_ok(bytes.get(span.end), bytes.get(span.end + 1))
}

fn email(_: &Context, text: &str, captures: &Captures<'_>) -> Option<(Range<usize>, Confidence)> {
    let span = whole(captures);
    let value = &text[span.clone()];
    // `user:password@host` in a URL is credentials, not an address.
    let token_start = text[..span.start].rfind(char::is_whitespace).map_or(0, |i| i + 1);
    if text[token_start..span.start].contains("://") {
        return None;
    }
    let (local, domain) = value.split_once('@')?;
    let good_local = !local.starts_with('.') && !local.ends_with('.') && !local.contains("..");
    let good_domain = domain
        .split('.')
        .all(|label| !label.is_empty() && !label.starts_with('-') && !label.ends_with('-'));
    (good_local && good_domain && local.len() <= 64).then_some((span, Confidence::High))
}

/// Dates written with the separators phone numbers use (`15.01.2024`), and ISO dates with an
/// hour after them (`2024-01-15 10`).
fn looks_like_a_date(value: &str) -> bool {
    let lengths = |text: &str, separators: &[char]| -> Vec<usize> {
        text.split(separators).map(str::len).collect()
    };
    let whole = lengths(value, &['-', '.', '/', ' ']);
    let first_word = value.split(' ').next().unwrap_or_default();
    let iso = lengths(first_word, &['-', '/', '.']);
    matches!(whole.as_slice(), [4, 1 | 2, 1 | 2] | [1 | 2, 1 | 2, 2 | 4])
        || matches!(iso.as_slice(), [4, 1 | 2, 1 | 2])
}

fn phone(
    context: &Context,
    text: &str,
    captures: &Captures<'_>,
) -> Option<(Range<usize>, Confidence)> {
    let span = whole(captures);
    if !alone(text, &span) {
        return None;
    }
    let value = &text[span.clone()];
    let count = value.bytes().filter(u8::is_ascii_digit).count();
    if !(7..=15).contains(&count) || looks_like_a_date(value) {
        return None;
    }
    let valid = |region| {
        PHONE_NUMBER_UTIL.parse(value, region).is_ok_and(|n| PHONE_NUMBER_UTIL.is_valid_number(&n))
    };
    let found = if value.starts_with('+') {
        valid(None)
    } else {
        context.regions.iter().any(|&region| valid(Some(region)))
    };
    // Bare digits (a timestamp, an order number) and two-part numbers (a range such as
    // 1024-65535) are valid phone numbers too often to be sure of.
    let separators = value.split(|c: char| !c.is_ascii_digit()).filter(|p| !p.is_empty()).count();
    let plain = !value.starts_with('+') && !value.contains('(') && separators <= 2;
    found.then_some((span, if plain { Confidence::Low } else { Confidence::Medium }))
}

/// Whether `digits` begin as some card network's numbers do (the issuer identification
/// numbers of Visa, Mastercard, American Express, Discover, JCB, Diners Club, `UnionPay` and
/// Maestro), at a length that network uses.
fn card_network(digits: &[u8]) -> bool {
    let prefix = |n: usize| digits.iter().take(n).fold(0u32, |acc, &d| acc * 10 + u32::from(d));
    let len = digits.len();
    match digits.first() {
        Some(4) => matches!(len, 13 | 16 | 19),
        Some(5) => {
            let first_two = prefix(2);
            ((51..=55).contains(&first_two) && len == 16)
                || ((first_two == 50 || (56..=58).contains(&first_two)) && len >= 12)
        }
        Some(2) => (2221..=2720).contains(&prefix(4)) && len == 16,
        Some(3) => {
            (matches!(prefix(2), 34 | 37) && len == 15)
                || ((3528..=3589).contains(&prefix(4)) && (16..=19).contains(&len))
                || ((matches!(prefix(2), 36 | 38 | 39) || (300..=305).contains(&prefix(3)))
                    && (14..=19).contains(&len))
        }
        Some(6) => (16..=19).contains(&len),
        _ => false,
    }
}

fn card(_: &Context, text: &str, captures: &Captures<'_>) -> Option<(Range<usize>, Confidence)> {
    let span = whole(captures);
    let digits = digits(&text[span.clone()]);
    (alone(text, &span) && card_network(&digits) && checksums::luhn(&digits))
        .then_some((span, Confidence::High))
}

fn iban(_: &Context, text: &str, captures: &Captures<'_>) -> Option<(Range<usize>, Confidence)> {
    let mut span = whole(captures);
    // The pattern may take a word after the number ("... 3000 AND"): drop trailing groups
    // until the rest is an IBAN.
    loop {
        let compact: String = text[span.clone()].chars().filter(|c| *c != ' ').collect();
        if compact.len() < 15 {
            return None;
        }
        if compact.parse::<Iban>().is_ok() {
            return Some((span, Confidence::High));
        }
        let last_space = text[span.clone()].rfind(' ')?;
        span.end = span.start + last_space;
    }
}

fn us_ssn(_: &Context, text: &str, captures: &Captures<'_>) -> Option<(Range<usize>, Confidence)> {
    let span = whole(captures);
    let value = &text[span.clone()];
    let bytes = value.as_bytes();
    if bytes[3] != bytes[6] || !alone(text, &span) {
        return None;
    }
    let (area, group, serial) = (&value[..3], &value[4..6], &value[7..]);
    let area_ok = area != "000" && area != "666" && !area.starts_with('9');
    // Two numbers printed on sample cards and in advertising, never a person's.
    let sample = matches!(value.replace([' ', '.'], "-").as_str(), "078-05-1120" | "219-09-9999");
    (area_ok && group != "00" && serial != "0000" && !sample).then_some((span, Confidence::Medium))
}

/// A number standing alone whose digits pass `valid`, found with `confidence`.
fn checked_digits(
    text: &str,
    captures: &Captures<'_>,
    valid: fn(&[u8]) -> bool,
    confidence: Confidence,
) -> Option<(Range<usize>, Confidence)> {
    let span = whole(captures);
    let digits = digits(&text[span.clone()]);
    let repeated = digits.iter().all(|&d| d == digits[0]);
    (alone(text, &span) && !repeated && valid(&digits)).then_some((span, confidence))
}

fn uk_nhs(_: &Context, text: &str, captures: &Captures<'_>) -> Option<(Range<usize>, Confidence)> {
    checked_digits(text, captures, checksums::nhs, Confidence::Medium)
}

fn aadhaar(_: &Context, text: &str, captures: &Captures<'_>) -> Option<(Range<usize>, Confidence)> {
    checked_digits(text, captures, checksums::verhoeff, Confidence::Medium)
}

fn cpf(_: &Context, text: &str, captures: &Captures<'_>) -> Option<(Range<usize>, Confidence)> {
    checked_digits(text, captures, checksums::cpf, Confidence::High)
}

fn spanish_id(
    _: &Context,
    text: &str,
    captures: &Captures<'_>,
) -> Option<(Range<usize>, Confidence)> {
    let span = whole(captures);
    checksums::spanish_id(&text[span.clone()]).then_some((span, Confidence::High))
}

fn korean_rrn(
    _: &Context,
    text: &str,
    captures: &Captures<'_>,
) -> Option<(Range<usize>, Confidence)> {
    let span = whole(captures);
    let value = &text[span.clone()];
    if checksums::korean_rrn(&digits(value)) {
        Some((span, Confidence::High))
    } else {
        // Numbers issued since October 2020 carry no check digit; the hyphenated form is
        // still distinctive.
        value.contains('-').then_some((span, Confidence::Medium))
    }
}

fn ipv4(_: &Context, text: &str, captures: &Captures<'_>) -> Option<(Range<usize>, Confidence)> {
    let span = whole(captures);
    let bytes = text.as_bytes();
    // Not a piece of a longer dotted number (a version, an OID).
    let dotted_before =
        span.start >= 2 && bytes[span.start - 1] == b'.' && bytes[span.start - 2].is_ascii_digit();
    let dotted_after = bytes.get(span.end) == Some(&b'.')
        && bytes.get(span.end + 1).is_some_and(u8::is_ascii_digit);
    let ok = !dotted_before && !dotted_after && text[span.clone()].parse::<Ipv4Addr>().is_ok();
    ok.then_some((span, Confidence::Medium))
}

fn ipv6(_: &Context, text: &str, captures: &Captures<'_>) -> Option<(Range<usize>, Confidence)> {
    let span = whole(captures);
    let value = &text[span.clone()];
    let hex_digits = value.bytes().filter(u8::is_ascii_hexdigit).count();
    let colons = value.bytes().filter(|&b| b == b':').count();
    let shaped = value.contains("::") || colons == 7;
    let ok = shaped && hex_digits >= 2 && alone(text, &span) && value.parse::<Ipv6Addr>().is_ok();
    ok.then_some((span, Confidence::Medium))
}

fn url_credentials(
    _: &Context,
    _: &str,
    captures: &Captures<'_>,
) -> Option<(Range<usize>, Confidence)> {
    // The user and password, not the rest of the URL: the model still sees where it points.
    let start = captures.get(1)?.start();
    let end = captures.get(2)?.end();
    Some((start..end, Confidence::High))
}

/// The longest private key block looked for, in bytes: a 16,384-bit RSA key in PEM, with
/// an encryption header, is under 13 KB.
const LONGEST_KEY_BLOCK: usize = 64 * 1024;

#[allow(clippy::unnecessary_wraps, reason = "every check has the same signature")]
fn private_key(
    _: &Context,
    text: &str,
    captures: &Captures<'_>,
) -> Option<(Range<usize>, Confidence)> {
    let begin = whole(captures);
    // A block ends before the next one begins, and is never longer than the longest key:
    // each candidate reads only up to the next, so many begin lines cost linear time.
    let mut limit = (begin.end + LONGEST_KEY_BLOCK).min(text.len());
    while !text.is_char_boundary(limit) {
        limit -= 1;
    }
    let rest = &text[begin.end..limit];
    let rest = rest.find("-----BEGIN").map_or(rest, |next| &rest[..next]);
    if let Some(end) = rest.find("-----END") {
        let tail = &rest[end + 8..];
        if let Some(close) = tail.find("-----") {
            return Some((begin.start..begin.end + end + 8 + close + 5, Confidence::High));
        }
    }
    // No end marker (a key pasted in part): the key runs on over the lines that look like
    // one (base64, or a header such as `Proc-Type: 4,ENCRYPTED`).
    let first_line = rest.find('\n').map_or(rest.len(), |i| i + 1);
    let mut end = begin.end + first_line;
    for line in rest[first_line..].split_inclusive('\n') {
        let body = line.trim();
        let key_like = !body.is_empty()
            && body.bytes().all(|b| b.is_ascii_alphanumeric() || b"+/=:,- ".contains(&b));
        if !key_like {
            break;
        }
        end += line.len();
    }
    let end = begin.start + text[begin.start..end].trim_end().len();
    Some((begin.start..end, Confidence::High))
}
