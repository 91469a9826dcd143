//! A compiled prompt template: the prompt split once into literal runs and value slots, then
//! rendered any number of times with one allocation each.

use foldhash::HashMap;

use serde::Serialize;

use crate::template::scan::placeholders;

/// The value of one variable: a single string, or the items of a multi-select.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Value {
    Text(String),
    List(Vec<String>),
}

/// How the items of a multi-select value are joined in the prompt.
pub const LIST_SEPARATOR: &str = ", ";

impl Value {
    /// The number of bytes the value takes in the rendered prompt.
    pub fn rendered_len(&self) -> usize {
        match self {
            Value::Text(text) => text.len(),
            Value::List(items) => {
                items.iter().map(String::len).sum::<usize>()
                    + LIST_SEPARATOR.len() * items.len().saturating_sub(1)
            }
        }
    }

    fn write_to(&self, out: &mut String) {
        match self {
            Value::Text(text) => out.push_str(text),
            Value::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(LIST_SEPARATOR);
                    }
                    out.push_str(item);
                }
            }
        }
    }
}

/// One part of a compiled prompt, for writing it in another template language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Text copied as is.
    Literal(&'a str),
    /// The value of the variable in this slot.
    Slot(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Segment {
    /// `prompt[start..end]`, copied as is.
    Literal { start: usize, end: usize },
    /// The value in this slot.
    Slot(usize),
}

/// A prompt split into literal text and slots for the values of named variables.
///
/// Only placeholders whose name is one of the slot names become slots; every other `{{...}}`
/// stays literal text. Rendering is a single pass: a value that itself contains `{{x}}` is
/// inserted verbatim.
#[derive(Debug, Clone)]
pub struct Template {
    prompt: String,
    segments: Vec<Segment>,
    literal_len: usize,
    slot_count: usize,
    /// Whether each slot appears in the prompt.
    used: Vec<bool>,
}

impl Template {
    /// Compiles `prompt`, with slot `i` for the placeholder named `slot_names[i]`.
    pub fn compile(prompt: &str, slot_names: &[&str]) -> Self {
        let slot_of: HashMap<&str, usize> =
            slot_names.iter().enumerate().map(|(i, name)| (*name, i)).collect();
        let mut segments = Vec::new();
        let mut literal_from = 0;
        for placeholder in placeholders(prompt) {
            let Some(&slot) = slot_of.get(placeholder.name) else { continue };
            if placeholder.range.start > literal_from {
                segments
                    .push(Segment::Literal { start: literal_from, end: placeholder.range.start });
            }
            segments.push(Segment::Slot(slot));
            literal_from = placeholder.range.end;
        }
        if literal_from < prompt.len() {
            segments.push(Segment::Literal { start: literal_from, end: prompt.len() });
        }
        let literal_len = segments
            .iter()
            .map(|s| match s {
                Segment::Literal { start, end } => end - start,
                Segment::Slot(_) => 0,
            })
            .sum();
        let mut used = vec![false; slot_names.len()];
        for segment in &segments {
            if let Segment::Slot(slot) = *segment {
                used[slot] = true;
            }
        }
        Self {
            prompt: prompt.to_owned(),
            segments,
            literal_len,
            slot_count: slot_names.len(),
            used,
        }
    }

    /// The number of slots (the length of the `values` that [`Template::render`] takes).
    pub fn slot_count(&self) -> usize {
        self.slot_count
    }

    /// Whether slot `slot` appears in the prompt.
    pub fn uses_slot(&self, slot: usize) -> bool {
        self.used.get(slot).copied().unwrap_or(false)
    }

    /// The prompt as literal runs and slots, in order.
    pub fn pieces(&self) -> impl Iterator<Item = Piece<'_>> {
        self.segments.iter().map(|segment| match *segment {
            Segment::Literal { start, end } => Piece::Literal(&self.prompt[start..end]),
            Segment::Slot(slot) => Piece::Slot(slot),
        })
    }

    /// Renders with `values[i]` in slot `i`; one allocation of the exact final size.
    ///
    /// # Panics
    /// If `values` is shorter than [`Template::slot_count`].
    pub fn render(&self, values: &[Value]) -> String {
        assert!(values.len() >= self.slot_count, "one value is needed for each slot");
        let values_len: usize = self
            .segments
            .iter()
            .map(|s| if let Segment::Slot(i) = s { values[*i].rendered_len() } else { 0 })
            .sum();
        let mut out = String::with_capacity(self.literal_len + values_len);
        for segment in &self.segments {
            match *segment {
                Segment::Literal { start, end } => out.push_str(&self.prompt[start..end]),
                Segment::Slot(i) => values[i].write_to(&mut out),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_declared_slots_and_keeps_other_braces() {
        let template = Template::compile("Hi {{ name }}, {{other}} {{tags}}!", &["name", "tags"]);
        let values = [Value::Text("{{tags}}".into()), Value::List(vec!["a".into(), "b".into()])];
        assert_eq!(template.render(&values), "Hi {{tags}}, {{other}} a, b!");
        assert!(template.uses_slot(1));
    }

    #[test]
    fn exact_capacity() {
        let template = Template::compile("{{a}}-{{a}}", &["a"]);
        let out = template.render(&[Value::Text("xyz".into())]);
        assert_eq!(out, "xyz-xyz");
        assert_eq!(out.capacity(), 7);
    }
}
