//! Checking that an answer is well-formed JSON, XML or CSV.

/// The answer as pretty-printed JSON, or why it does not parse.
pub fn check_json(text: &str) -> Result<String, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("it is not valid JSON: {e}"))?;
    serde_json::to_string_pretty(&value).map_err(|e| e.to_string())
}

/// Whether the answer is one well-formed XML document (a single root element, tags balanced
/// and matching, text outside the root only whitespace).
pub fn check_xml(text: &str) -> Result<(), String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let (mut depth, mut roots) = (0usize, 0usize);
    loop {
        let event = reader.read_event().map_err(|e| {
            format!("it is not well-formed XML at byte {}: {e}", reader.error_position())
        })?;
        match event {
            Event::Start(_) => {
                if depth == 0 {
                    roots += 1;
                }
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Empty(_) if depth == 0 => roots += 1,
            Event::Text(t) if depth == 0 && !t.as_ref().trim().is_empty() => {
                return Err("it has text outside the root element".into());
            }
            Event::Eof => break,
            _ => {}
        }
    }
    match (roots, depth) {
        (_, d) if d > 0 => Err("an element is never closed".into()),
        (0, _) => Err("it has no root element".into()),
        (1, _) => Ok(()),
        (n, _) => Err(format!("it has {n} root elements; XML allows one")),
    }
}

/// Whether every CSV record has the same number of fields.
pub fn check_csv(text: &str) -> Result<(), String> {
    let mut reader =
        csv::ReaderBuilder::new().has_headers(false).flexible(false).from_reader(text.as_bytes());
    let mut records = 0;
    for record in reader.records() {
        record.map_err(|e| format!("it is not consistent CSV: {e}"))?;
        records += 1;
    }
    if records == 0 { Err("it holds no CSV rows".into()) } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json() {
        assert_eq!(check_json("{\"a\":[1,2]}").unwrap(), "{\n  \"a\": [\n    1,\n    2\n  ]\n}");
        assert!(check_json("{\"a\":").unwrap_err().contains("not valid JSON"));
    }

    #[test]
    fn xml() {
        assert!(check_xml("<?xml version=\"1.0\"?>\n<a><b/>text</a>\n").is_ok());
        assert!(check_xml("<a><b></a>").is_err());
        assert!(check_xml("<a/><b/>").unwrap_err().contains("2 root"));
        assert!(check_xml("just text").is_err());
        assert!(check_xml("<a>").is_err());
    }

    #[test]
    fn csv() {
        assert!(check_csv("a,b\n1,2\n\"x,y\",3\n").is_ok());
        assert!(check_csv("a,b\n1,2,3\n").unwrap_err().contains("consistent"));
    }
}
