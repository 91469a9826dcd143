//! The numbering plans run on `rlibphonenumber`'s `lite` regex engine (see the workspace's
//! Cargo.toml). A plan pattern that engine could not compile would make the library panic
//! on a number of that region, so every region's example numbers, of every type it has, are
//! formatted, parsed back and validated here: that compiles and runs each region's number
//! patterns, its formats and its national prefix rules.

use rlibphonenumber::{PHONE_NUMBER_UTIL, PhoneNumberFormat};

#[test]
fn every_regions_example_numbers_round_trip_on_the_lite_engine() {
    let util = &*PHONE_NUMBER_UTIL;
    let mut checked = 0;
    let mut problems = Vec::new();
    for region in util.get_supported_regions() {
        let types = util.get_supported_types_for_region(region).unwrap_or_default();
        for number_type in types {
            let Ok(example) = util.get_example_number_for_type_and_region(region, number_type)
            else {
                continue;
            };
            for format in [
                PhoneNumberFormat::E164,
                PhoneNumberFormat::International,
                PhoneNumberFormat::National,
            ] {
                let written = util.format(&example, format).into_owned();
                let read_back = util.parse(&written, Some(region));
                if !read_back.as_ref().is_ok_and(|n| util.is_valid_number(n)) {
                    problems.push(format!("{region} {number_type:?} {format:?}: {written}"));
                }
                checked += 1;
            }
        }
    }
    // Some 245 regions with a few types each; far fewer would mean the loop checked nothing.
    assert!(checked > 2_000, "only {checked} numbers were checked");
    assert!(problems.is_empty(), "{} of {checked}:\n{}", problems.len(), problems.join("\n"));
}
