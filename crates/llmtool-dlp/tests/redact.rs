//! Redaction and restoring: placeholders are typed, stable within a request, never collide
//! with the text's own words, and come back in whole answers and in streams cut anywhere.

use std::sync::LazyLock;

use llmtool_dlp::{Redaction, Scanner};
use proptest::prelude::*;

static SCANNER: LazyLock<Scanner> = LazyLock::new(Scanner::with_defaults);

fn redact(text: &str) -> (String, Redaction) {
    let findings = SCANNER.scan(text);
    let mut redaction = Redaction::new();
    (redaction.redact(text, &findings), redaction)
}

#[test]
fn values_become_typed_placeholders_the_same_value_the_same_one() {
    let (text, redaction) = redact(
        "From ann@example.com to bob@example.com, cc ann@example.com; card 4111 1111 1111 1111.",
    );
    assert_eq!(text, "From [EMAIL_1] to [EMAIL_2], cc [EMAIL_1]; card [CARD_1].");
    assert_eq!(redaction.counts().get("email"), Some(&3));
    assert_eq!(redaction.counts().get("payment_card"), Some(&1));
    assert!(!format!("{redaction:?}").contains("ann@"), "Debug shows no value");
}

#[test]
fn a_placeholder_the_text_already_holds_is_skipped() {
    let (text, redaction) = redact("Template [EMAIL_1] stays; real: ann@example.com");
    assert_eq!(text, "Template [EMAIL_1] stays; real: [EMAIL_2]");
    assert_eq!(redaction.restore("Sent to [EMAIL_2]."), "Sent to ann@example.com.");
}

#[test]
fn the_answer_gets_its_values_back_and_unknown_brackets_stay() {
    let (_, redaction) = redact("Mail ann@example.com");
    assert_eq!(
        redaction.restore("Dear [EMAIL_1], see [EMAIL_9] and [link] [EMAIL_1"),
        "Dear ann@example.com, see [EMAIL_9] and [link] [EMAIL_1"
    );
}

#[test]
fn masking_hides_the_values_again_for_a_log() {
    let (_, redaction) = redact("Mail ann@example.com, card 4111 1111 1111 1111");
    let answer = redaction.restore("Wrote to [EMAIL_1] about [CARD_1].").into_owned();
    assert_eq!(redaction.mask(&answer), "Wrote to [EMAIL_1] about [CARD_1].");
}

#[test]
fn a_conversation_resumes_its_placeholders_and_numbers_new_values_after_them() {
    let (_, first) = redact("From ann@example.com to bob@example.com");
    let kept: Vec<(String, String)> =
        first.placeholders().into_iter().map(|(p, v)| (p.to_owned(), v.to_owned())).collect();
    let mut next = Redaction::resume(kept.iter().map(|(p, v)| (p.as_str(), v.as_str())));
    assert!(next.counts().is_empty(), "a turn counts its own swaps");
    let text = "Ask bob@example.com and cy@example.com";
    let findings = SCANNER.scan(text);
    assert_eq!(next.redact(text, &findings), "Ask [EMAIL_2] and [EMAIL_3]");
    assert_eq!(next.counts().get("email"), Some(&2));
    assert_eq!(
        next.restore("[EMAIL_1], [EMAIL_2], [EMAIL_3]"),
        "ann@example.com, bob@example.com, cy@example.com",
        "earlier turns' placeholders come back too"
    );
    let odd = Redaction::resume([("EMAIL_1", "x@y.z"), ("[NO_NUMBER]", "v")]);
    assert!(odd.is_empty(), "what is not a placeholder is left out");
}

#[test]
fn a_stream_restores_a_placeholder_cut_across_chunks() {
    let (_, redaction) = redact("Mail ann@example.com");
    let mut restorer = redaction.restorer();
    let mut out = String::new();
    for chunk in ["Hi [", "EMA", "IL_", "1], [x] and [EM"] {
        out.push_str(&restorer.push(chunk));
    }
    assert_eq!(out, "Hi ann@example.com, [x] and ");
    out.push_str(&restorer.finish());
    assert_eq!(out, "Hi ann@example.com, [x] and [EM");
}

proptest! {
    /// However an answer is cut into chunks, streaming restores it as a whole restore does.
    #[test]
    fn streaming_equals_restoring_whole(cuts in proptest::collection::vec(0usize..60, 0..8)) {
        let (_, redaction) = redact("a@example.com and b@example.org and 10.1.2.3");
        let answer = "To [EMAIL_1] ([EMAIL_2]) via [IP_1]; [EMAIL_3] [IP_";
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(answer.len())).collect();
        cuts.sort_unstable();
        let mut restorer = redaction.restorer();
        let mut out = String::new();
        let mut at = 0;
        for cut in cuts.into_iter().chain([answer.len()]) {
            out.push_str(&restorer.push(&answer[at..cut]));
            at = cut;
        }
        out.push_str(&restorer.finish());
        prop_assert_eq!(out, redaction.restore(answer).into_owned());
    }
}
