//! Whether a parsed phone number is valid: the `phonenumber` crate's numbering plans (from
//! libphonenumber's metadata), compiled once per country code into our own regexes.
//!
//! Written here rather than calling `phonenumber::is_valid` because that one matches each plan
//! through a regex cache of 100 entries shared by every country: checking a candidate against
//! the eight default regions overflows it, so it compiles the same patterns again and again,
//! which made phone numbers most of a scan's time. The semantics are libphonenumber's: a
//! national number is valid when it has one of its region's possible lengths and matches,
//! whole, the general pattern and the pattern of one number type (fixed line, mobile, toll
//! free, ...), in any region that shares the country code.

use std::sync::OnceLock;

use phonenumber::metadata::{DATABASE, Descriptor};
use phonenumber::{Metadata, PhoneNumber};
use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};

/// Country calling codes are one to three digits.
const CODES: usize = 1000;

/// Every country code's compiled plans, each built the first time a number needs it.
static PLANS: [OnceLock<Vec<RegionPlan>>; CODES] = [const { OnceLock::new() }; CODES];

/// Whether `number` is a valid number of its country code.
pub(crate) fn is_valid(number: &PhoneNumber) -> bool {
    let code = usize::from(number.country().code());
    let Some(plans) = PLANS.get(code) else { return false };
    let national = number.national().to_string();
    plans.get_or_init(|| compile_code(code)).iter().any(|plan| plan.is_valid(national.as_bytes()))
}

/// One region's plan: the general description, and each number type's.
struct RegionPlan {
    general: Pattern,
    /// The number types' patterns as one set, and their possible lengths by set index.
    types: RegexSet,
    type_lengths: Vec<Vec<u16>>,
}

struct Pattern {
    regex: Regex,
    lengths: Vec<u16>,
}

impl RegionPlan {
    fn is_valid(&self, national: &[u8]) -> bool {
        let length = u16::try_from(national.len()).unwrap_or(u16::MAX);
        let fits = |lengths: &[u16]| lengths.is_empty() || lengths.contains(&length);
        fits(&self.general.lengths)
            && self.general.regex.is_match(national)
            && self.types.matches(national).iter().any(|i| fits(&self.type_lengths[i]))
    }
}

fn compile_code(code: usize) -> Vec<RegionPlan> {
    let code = u16::try_from(code).unwrap_or_default();
    DATABASE.by_code(&code).unwrap_or_default().into_iter().filter_map(compile_region).collect()
}

/// The number types libphonenumber tells apart when it says whether a number is valid.
fn number_types(meta: &Metadata) -> impl Iterator<Item = &Descriptor> {
    let d = meta.descriptors();
    [
        d.premium_rate(),
        d.toll_free(),
        d.shared_cost(),
        d.voip(),
        d.personal_number(),
        d.pager(),
        d.uan(),
        d.voicemail(),
        d.fixed_line(),
        d.mobile(),
    ]
    .into_iter()
    .flatten()
}

/// A region's plan, or none when a pattern does not compile (then the region finds nothing).
fn compile_region(meta: &Metadata) -> Option<RegionPlan> {
    // The metadata keeps its XML layout: the patterns are compiled ignoring whitespace.
    let whole = |d: &Descriptor| format!("^(?:{})$", d.national_number().as_str());
    let general = meta.descriptors().general();
    let general = Pattern {
        regex: RegexBuilder::new(&whole(general))
            .unicode(false)
            .ignore_whitespace(true)
            .build()
            .ok()?,
        lengths: general.possible_length().to_vec(),
    };
    let types: Vec<&Descriptor> = number_types(meta).collect();
    Some(RegionPlan {
        general,
        types: RegexSetBuilder::new(types.iter().map(|d| whole(d)))
            .unicode(false)
            .ignore_whitespace(true)
            .build()
            .ok()?,
        type_lengths: types.iter().map(|d| d.possible_length().to_vec()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use phonenumber::country;

    fn valid(region: Option<country::Id>, text: &str) -> bool {
        phonenumber::parse(region, text).is_ok_and(|n| is_valid(&n))
    }

    #[test]
    fn agrees_with_libphonenumber_on_its_examples() {
        // Every region's example numbers, whole and with the last digit dropped: ours says
        // what the crate's own check says, except that the crate matches a pattern at the
        // start of a number rather than the whole of it (libphonenumber wants it whole), so
        // it takes some shortened numbers that we refuse.
        let (mut checked, mut valid_examples, mut disagree) = (0, 0, Vec::new());
        for meta in DATABASE.iter() {
            let Ok(region) = meta.id().parse::<country::Id>() else { continue };
            for example in number_types(meta).filter_map(Descriptor::example) {
                valid_examples += usize::from(valid(Some(region), example));
                for (text, shortened) in [(example, false), (&example[..example.len() - 1], true)] {
                    let theirs = phonenumber::parse(Some(region), text)
                        .is_ok_and(|n| phonenumber::is_valid(&n));
                    let ours = valid(Some(region), text);
                    if ours != theirs && !(shortened && theirs) {
                        disagree.push(format!("{} {text}: theirs {theirs}", meta.id()));
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 2000, "only {checked} numbers");
        assert!(
            valid_examples * 100 > checked / 2 * 98,
            "{valid_examples} of {} examples valid",
            checked / 2
        );
        assert_eq!(disagree, Vec::<String>::new());
    }

    #[test]
    fn a_number_of_another_region_of_the_code_is_valid() {
        // Toronto, parsed as if written in the US: valid through Canada's plan.
        assert!(valid(Some(country::Id::US), "416 979 2211"));
        let us = DATABASE.by_id("US").and_then(compile_region).expect("the US plan compiles");
        assert!(!us.is_valid(b"4169792211"), "Toronto is not in the US plan");
        assert!(us.is_valid(b"2015550123"));
        assert!(!valid(Some(country::Id::US), "123 456 7890"));
        assert!(valid(None, "+44 20 7946 0958"));
        assert!(!valid(None, "+44 20 7946 09"));
    }
}
