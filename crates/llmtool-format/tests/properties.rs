//! Property tests: the canonical form is a fixpoint and keeps every value; rendering matches a
//! naive reference; no input makes the checker panic.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use llmtool_format::Document;
use llmtool_format::format::format_source;
use llmtool_format::template::{Template, Value};
use proptest::prelude::*;
use serde_json::Value as Json;

/// Text with the characters that stress JSON and placeholders: quotes, backslashes, control
/// characters, braces, and several scripts.
fn tricky_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("\"".to_owned()),
            Just("\\".to_owned()),
            Just("\n".to_owned()),
            Just("\u{1}".to_owned()),
            Just("{".to_owned()),
            Just("}".to_owned()),
            Just("주제".to_owned()),
            Just("ñ".to_owned()),
            Just("🚀".to_owned()),
            "[a-z ]{1,6}",
        ],
        0..8,
    )
    .prop_map(|parts| parts.concat())
}

fn json_value() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i32>().prop_map(Json::from),
        (-1e6f64..1e6).prop_map(Json::from),
        tricky_text().prop_map(Json::String),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Json::Array),
            proptest::collection::vec(("[a-z_]{1,8}|x-[a-z]{1,4}", inner), 0..5)
                .prop_map(|members| Json::Object(members.into_iter().collect())),
        ]
    })
}

/// A tool-like object: a prompt, and other keys that are not normalized by `fmt`.
fn tool_object() -> impl Strategy<Value = Json> {
    (tricky_text(), proptest::collection::vec(("[a-z_]{1,10}", json_value()), 0..6)).prop_map(
        |(prompt, extra)| {
            let mut map = serde_json::Map::new();
            for (key, value) in extra {
                if !["metadata", "model_prompt"].contains(&key.as_str()) {
                    map.insert(key, value);
                }
            }
            map.insert("model_prompt".into(), Json::String(prompt));
            Json::Object(map)
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn canonical_form_is_a_fixpoint_and_keeps_every_value(tool in tool_object(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&tool).unwrap() } else { serde_json::to_string(&tool).unwrap() };
        let canonical = format_source(&text, false).unwrap().text;
        let again = format_source(&canonical, false).unwrap().text;
        prop_assert_eq!(&again, &canonical);
        let reparsed: Json = serde_json::from_str(&canonical).unwrap();
        prop_assert_eq!(reparsed, tool);
    }

    #[test]
    fn render_matches_a_naive_reference(
        literals in proptest::collection::vec("[a-z {}.]{0,12}", 1..6),
        names in proptest::collection::vec(prop_oneof![Just("a"), Just("b c"), Just("주제")], 0..5),
        pads in proptest::collection::vec(prop_oneof![Just(""), Just(" "), Just("  \t")], 5),
        a in tricky_text(), b in tricky_text(), c in proptest::collection::vec(tricky_text(), 0..3),
    ) {
        // Literal text never contains `{{` or `}}` next to a placeholder in this generator.
        let literals: Vec<String> = literals.iter().map(|l| l.replace("{{", "{").replace("}}", "}").trim_matches(['{', '}']).to_owned()).collect();
        let values = [Value::Text(a.clone()), Value::Text(b.clone()), Value::List(c.clone())];
        let value_text = |name: &str| match name { "a" => a.clone(), "b c" => b.clone(), _ => c.join(", ") };
        let mut prompt = String::new();
        let mut expected = String::new();
        for (i, literal) in literals.iter().enumerate() {
            prompt.push_str(literal);
            expected.push_str(literal);
            if let Some(name) = names.get(i) {
                let pad = pads[i % pads.len()];
                prompt.push_str("{{");
                prompt.push_str(pad);
                prompt.push_str(name);
                prompt.push_str(pad);
                prompt.push_str("}}");
                expected.push_str(&value_text(name));
            }
        }
        let template = Template::compile(&prompt, &["a", "b c", "주제"]);
        prop_assert_eq!(template.render(&values), expected);
    }

    #[test]
    fn no_input_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let document = Document::from_bytes(&bytes);
        let _ = format_source(&document.text, true);
        if let Some(template) = document.tool.as_ref().map(llmtool_format::template::ToolTemplate::new) {
            let _ = template.render(&llmtool_format::template::Inputs::new());
        }
    }

    #[test]
    fn json_like_input_never_panics(text in "[\\[\\]{}\",:0-9a-z \\\\/*.\\-+eEtrufalsn\n]{0,200}") {
        let document = Document::from_text(text);
        let _ = format_source(&document.text, true);
    }
}
