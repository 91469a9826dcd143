//! What a finding is: its [`Kind`], how sure the scanner is ([`Confidence`]) and where it is
//! ([`Finding`]). Nothing here holds the value found, so reports cannot leak it.

use std::ops::Range;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// The kinds of sensitive value the scanner knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Email,
    Phone,
    PaymentCard,
    Iban,
    UsSsn,
    UkNhs,
    InAadhaar,
    EsDni,
    BrCpf,
    KrRrn,
    IpAddress,
    UrlCredentials,
    PrivateKey,
    Secret,
    /// A match of a custom regex or word list from the config.
    Custom,
}

impl Kind {
    /// Every built-in kind (all but [`Kind::Custom`]), in the order reports list them.
    pub const BUILT_IN: [Kind; 14] = [
        Kind::Email,
        Kind::Phone,
        Kind::PaymentCard,
        Kind::Iban,
        Kind::UsSsn,
        Kind::UkNhs,
        Kind::InAadhaar,
        Kind::EsDni,
        Kind::BrCpf,
        Kind::KrRrn,
        Kind::IpAddress,
        Kind::UrlCredentials,
        Kind::PrivateKey,
        Kind::Secret,
    ];

    /// The kind's name in configs, flags and JSON reports.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Email => "email",
            Kind::Phone => "phone",
            Kind::PaymentCard => "payment_card",
            Kind::Iban => "iban",
            Kind::UsSsn => "us_ssn",
            Kind::UkNhs => "uk_nhs",
            Kind::InAadhaar => "in_aadhaar",
            Kind::EsDni => "es_dni",
            Kind::BrCpf => "br_cpf",
            Kind::KrRrn => "kr_rrn",
            Kind::IpAddress => "ip_address",
            Kind::UrlCredentials => "url_credentials",
            Kind::PrivateKey => "private_key",
            Kind::Secret => "secret",
            Kind::Custom => "custom",
        }
    }

    /// The kind named `name` (see [`Kind::name`]).
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::BUILT_IN.into_iter().chain([Kind::Custom]).find(|kind| kind.name() == name)
    }

    /// The word its placeholders carry: `[EMAIL_1]`.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Email => "EMAIL",
            Kind::Phone => "PHONE",
            Kind::PaymentCard => "CARD",
            Kind::Iban => "IBAN",
            Kind::UsSsn => "SSN",
            Kind::UkNhs => "NHS_NUMBER",
            Kind::InAadhaar => "AADHAAR",
            Kind::EsDni => "DNI",
            Kind::BrCpf => "CPF",
            Kind::KrRrn => "RRN",
            Kind::IpAddress => "IP",
            Kind::UrlCredentials => "CREDENTIALS",
            Kind::PrivateKey => "PRIVATE_KEY",
            Kind::Secret => "SECRET",
            Kind::Custom => "REDACTED",
        }
    }

    /// Which kind a value is when two kinds find it equally surely, lowest first: the more
    /// specific shape wins (a dashed nine-digit number is a social security number before it
    /// is a phone number). Phone numbers come last: many digit strings are valid in some
    /// numbering plan, while a checksum that passes is evidence; a word before a phone number
    /// ("call") makes it surer and so wins anyway.
    pub(crate) fn priority(self) -> u8 {
        match self {
            Kind::Custom => 0,
            Kind::PrivateKey => 1,
            Kind::UrlCredentials => 2,
            Kind::Secret => 3,
            Kind::Email => 4,
            Kind::PaymentCard => 5,
            Kind::Iban => 6,
            Kind::EsDni => 7,
            Kind::BrCpf => 8,
            Kind::KrRrn => 9,
            Kind::UsSsn => 10,
            Kind::UkNhs => 11,
            Kind::InAadhaar => 12,
            Kind::IpAddress => 13,
            Kind::Phone => 14,
        }
    }

    /// The kind in words, for reports: "an e-mail address".
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Email => "an e-mail address",
            Kind::Phone => "a phone number",
            Kind::PaymentCard => "a payment card number",
            Kind::Iban => "an IBAN",
            Kind::UsSsn => "a US social security number",
            Kind::UkNhs => "a UK NHS number",
            Kind::InAadhaar => "an Indian Aadhaar number",
            Kind::EsDni => "a Spanish DNI or NIE",
            Kind::BrCpf => "a Brazilian CPF",
            Kind::KrRrn => "a Korean resident registration number",
            Kind::IpAddress => "an IP address",
            Kind::UrlCredentials => "credentials in a URL",
            Kind::PrivateKey => "a private key",
            Kind::Secret => "an API key or token",
            Kind::Custom => "a value the config names",
        }
    }
}

/// How sure the scanner is that a finding is what it says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// A shape many harmless values share (a nine-digit number with dashes, say).
    Low,
    /// The right shape and valid by the rules it has (a phone number a numbering plan allows).
    Medium,
    /// The right shape and a checksum or an unmistakable form (a card number passing Luhn,
    /// a key with its provider's prefix).
    High,
}

/// A sensitive value found in a text: what it is and where, never the value itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub kind: Kind,
    /// What found it: the kind's name, a secret rule's id (`github-pat`) or a custom rule's
    /// name.
    pub rule: Arc<str>,
    /// The word of its placeholder: the kind's label, or a custom rule's own.
    pub label: Arc<str>,
    /// Its bytes in the text scanned.
    pub span: Range<usize>,
    pub confidence: Confidence,
}

impl Confidence {
    /// One step surer.
    pub(crate) fn raised(self) -> Confidence {
        match self {
            Confidence::Low => Confidence::Medium,
            Confidence::Medium | Confidence::High => Confidence::High,
        }
    }
}

impl Finding {
    pub(crate) fn built_in(kind: Kind, span: Range<usize>, confidence: Confidence) -> Finding {
        Finding {
            kind,
            rule: Arc::from(kind.name()),
            label: Arc::from(kind.label()),
            span,
            confidence,
        }
    }
}
