//! What the scanner finds, kind by kind: real-shaped values it must find, and look-alikes it
//! must leave (a date is not a phone number, a random 16-digit number is not a card).

use std::sync::LazyLock;

use llmtool_dlp::{Confidence, Config, CustomRule, Kind, Scanner, WordList};

static SCANNER: LazyLock<Scanner> = LazyLock::new(Scanner::with_defaults);

/// The kinds and texts of what `text` holds, by the default scanner.
fn found(text: &str) -> Vec<(Kind, String)> {
    found_by(&SCANNER, text)
}

fn found_by(scanner: &Scanner, text: &str) -> Vec<(Kind, String)> {
    scanner.scan(text).into_iter().map(|f| (f.kind, text[f.span].to_owned())).collect()
}

fn one(kind: Kind, value: &str) -> Vec<(Kind, String)> {
    vec![(kind, value.to_owned())]
}

#[test]
fn email_addresses() {
    assert_eq!(
        found("Write to jane.doe+tag@mail.example.co.uk today."),
        one(Kind::Email, "jane.doe+tag@mail.example.co.uk")
    );
    assert_eq!(found("(bob@example.org)"), one(Kind::Email, "bob@example.org"));
    assert!(found("an @mention, a@b, and .dot@@example.com.").is_empty());
}

#[test]
fn phone_numbers_valid_in_a_numbering_plan() {
    for phone in [
        "+1 415 555 2671",
        "(415) 555-2671",
        "415-555-2671",
        "+44 20 7946 0958",
        "+82 2-312-3456",
        "010-1234-5678",
        "(604) 681-3600",
    ] {
        assert_eq!(found(&format!("call {phone} now")), one(Kind::Phone, phone), "{phone}");
    }
    // Dates, versions, short numbers and numbers no plan allows.
    for text in [
        "on 2024-01-15 at noon",
        "version 1.20.3",
        "room 4521",
        "call 000-000-0000",
        "ticket 12345",
    ] {
        assert!(found(text).is_empty(), "{text}: {:?}", found(text));
    }
}

#[test]
fn bare_and_two_part_numbers_are_phone_numbers_of_low_confidence() {
    // A Unix timestamp and a port range, from real tool files, are valid phone numbers.
    for text in ["\"created_at\": 1772840681,", "Port number (1024-65535)"] {
        let findings = SCANNER.scan(text);
        assert!(findings.iter().all(|f| f.confidence == Confidence::Low), "{text}: {findings:?}");
        let strict = Config { min_confidence: Some(Confidence::Medium), ..Config::default() };
        assert!(Scanner::new(&strict).unwrap().scan(text).is_empty(), "{text}");
    }
    // A word before the number makes it likelier.
    let called = SCANNER.scan("phone: 4155552672");
    assert_eq!(
        called.iter().map(|f| (f.kind, f.confidence)).collect::<Vec<_>>(),
        [(Kind::Phone, Confidence::Medium)]
    );
}

#[test]
fn payment_cards_pass_luhn_and_belong_to_a_network() {
    for card in
        ["4111 1111 1111 1111", "5555-5555-5555-4444", "378282246310005", "6011111111111117"]
    {
        assert_eq!(found(&format!("card: {card}.")), one(Kind::PaymentCard, card), "{card}");
    }
    // One digit changed (Luhn fails), and a Luhn-valid number no network issues.
    assert!(found("card 4111 1111 1111 1112").iter().all(|(k, _)| *k != Kind::PaymentCard));
    assert!(found("id 1234567812345670").iter().all(|(k, _)| *k != Kind::PaymentCard));
}

#[test]
fn ibans_pass_their_checksum_in_either_print_form() {
    assert_eq!(
        found("IBAN DE89 3704 0044 0532 0130 00 AND MORE"),
        one(Kind::Iban, "DE89 3704 0044 0532 0130 00")
    );
    assert_eq!(found("to GB29NWBK60161331926819."), one(Kind::Iban, "GB29NWBK60161331926819"));
    assert!(found("GB29NWBK60161331926818").iter().all(|(k, _)| *k != Kind::Iban));
}

#[test]
fn national_ids_with_their_checks() {
    assert_eq!(found("SSN 536-22-1234."), one(Kind::UsSsn, "536-22-1234"));
    let not_ssns = found("SSN 666-22-1234 or 536-00-1234 or 078-05-1120");
    assert!(not_ssns.iter().all(|(k, _)| *k != Kind::UsSsn), "{not_ssns:?}");
    assert_eq!(found("NHS 943 476 5919"), one(Kind::UkNhs, "943 476 5919"));
    assert_eq!(found("Aadhaar 4991 1866 5246"), one(Kind::InAadhaar, "4991 1866 5246"));
    assert_eq!(
        found("DNI 12345678Z, NIE X1234567L"),
        vec![(Kind::EsDni, "12345678Z".into()), (Kind::EsDni, "X1234567L".into())]
    );
    assert!(found("DNI 12345678A").iter().all(|(k, _)| *k != Kind::EsDni));
    assert_eq!(found("CPF 529.982.247-25"), one(Kind::BrCpf, "529.982.247-25"));
    assert!(found("CPF 529.982.247-26").iter().all(|(k, _)| *k != Kind::BrCpf));
    assert_eq!(found("주민등록번호 800101-1234560"), one(Kind::KrRrn, "800101-1234560"));
}

#[test]
fn ip_addresses_but_not_versions() {
    assert_eq!(found("host 192.168.1.20 is up"), one(Kind::IpAddress, "192.168.1.20"));
    assert_eq!(
        found("v6 2001:db8::8a2e:370:7334 too"),
        one(Kind::IpAddress, "2001:db8::8a2e:370:7334")
    );
    assert!(found("release 1.2.3.4.5 at 10:30:00, 999.1.1.1").is_empty());
}

#[test]
fn credentials_in_urls_but_not_the_rest_of_the_url() {
    let text = "clone https://deploy:s3cr3t-pass@git.example.com/repo.git";
    assert_eq!(found(text), one(Kind::UrlCredentials, "deploy:s3cr3t-pass"));
    assert!(found("see https://example.com/a:b@c and mailto-free text").is_empty());
}

#[test]
fn private_keys_whole_or_cut_short() {
    let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAAAAAAAEAAAAzAAAAC3NzaC1lZDI1NTE5\n-----END OPENSSH PRIVATE KEY-----";
    assert_eq!(found(&format!("my key:\n{key}\nthanks")), one(Kind::PrivateKey, key));
    let cut = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0";
    assert_eq!(found(&format!("{cut}\n\nwhat is this?")), one(Kind::PrivateKey, cut));
    // A block cut short ends where the next begins (each reads only up to the next, so a
    // text of many begin lines is scanned in linear time).
    let keys = found(&format!("{cut}\n{key}"));
    assert_eq!(keys, [(Kind::PrivateKey, cut.to_owned()), (Kind::PrivateKey, key.to_owned())]);
}

#[test]
fn api_keys_by_the_secret_rules() {
    let text =
        "export GITHUB_TOKEN=ghp_4Zs8fPq2LmN7xVb3KcT9wYr1HdJ6eGa5UoQi\nAWS AKIAZ4XQ7R2M5T2N3W6P";
    let findings = SCANNER.scan(text);
    let rules: Vec<&str> = findings.iter().map(|f| &*f.rule).collect();
    assert_eq!(rules, ["github-pat", "aws-access-token"]);
    assert!(findings.iter().all(|f| f.kind == Kind::Secret && f.confidence == Confidence::High));
    // gitleaks' allowlist: AWS's documentation key is not a secret.
    assert!(found("AKIAIOSFODNN7EXAMPLE").is_empty());
}

#[test]
fn config_rules_words_allow_and_ignore() {
    let config = Config {
        custom: vec![CustomRule {
            name: "employee id".into(),
            regex: r"\bEMP-(\d{6})\b".into(),
            label: None,
        }],
        words: vec![WordList {
            name: "project".into(),
            words: vec!["Nightjar".into(), "Blue Heron".into()],
            label: Some("PROJECT".into()),
        }],
        allow: vec!["help@example.com".into()],
        ignore: vec!["ip_address".into()],
        ..Config::default()
    };
    let scanner = Scanner::new(&config).expect("valid config");
    let text = "EMP-123456 on nightjar and BLUE HERON (not Nightjars); mail help@example.com or x@example.com from 10.0.0.1";
    let findings = scanner.scan(text);
    let seen: Vec<(&str, &str, &str)> =
        findings.iter().map(|f| (&*f.rule, &*f.label, &text[f.span.clone()])).collect();
    assert_eq!(
        seen,
        [
            ("employee id", "EMPLOYEE_ID", "123456"),
            ("project", "PROJECT", "nightjar"),
            ("project", "PROJECT", "BLUE HERON"),
            ("email", "EMAIL", "x@example.com"),
        ]
    );
}

#[test]
fn a_bad_config_says_what_is_wrong() {
    let bad_regex = Config {
        custom: vec![CustomRule { name: "x".into(), regex: "(".into(), label: None }],
        ..Config::default()
    };
    assert!(Scanner::new(&bad_regex).unwrap_err().to_string().contains("`x`"));
    let bad_ignore = Config { ignore: vec!["emails".into()], ..Config::default() };
    assert!(Scanner::new(&bad_ignore).unwrap_err().to_string().contains("`emails`"));
    let bad_region = Config { phone_regions: Some(vec!["XX".into()]), ..Config::default() };
    assert!(Scanner::new(&bad_region).unwrap_err().to_string().contains("`XX`"));
}

#[test]
fn overlapping_findings_keep_the_surest() {
    // A Luhn-valid Visa number is also shaped like a phone number: the card wins.
    assert_eq!(found("4111111111111111"), one(Kind::PaymentCard, "4111111111111111"));
}
