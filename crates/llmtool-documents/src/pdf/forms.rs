//! A PDF's form `XObjects` (drawings that draw other drawings) checked before any page is read.
//! `pdf-extract` follows a form's `Do` into the form it draws, recursively and without a guard:
//! a form that draws itself overflows the reading thread's stack (which no thread catches:
//! the process ends), and forms that each draw the next several times make work that doubles
//! with every level. So a document is refused when its forms loop, nest deeper than
//! [`MAX_DEPTH`], or could expand to more than [`MAX_EXPANSIONS`] drawings.

use std::collections::HashMap;

use pdf_extract::{Document, Object, ObjectId};

/// The deepest chain of forms drawing forms that is read.
pub(crate) const MAX_DEPTH: usize = 32;

/// The most form drawings one form may expand to (each `Do`, counted through every level).
pub(crate) const MAX_EXPANSIONS: u64 = 100_000;

/// Why a document's forms are refused, if they are.
pub(crate) fn problem(document: &Document) -> Option<String> {
    let forms: HashMap<ObjectId, Form> = document
        .objects
        .iter()
        .filter_map(|(id, object)| Some((*id, Form::of(document, object)?)))
        .collect();
    let mut expansions: HashMap<ObjectId, u64> = HashMap::new();
    for id in forms.keys() {
        let mut path = Vec::new();
        if let Err(problem) = expand(*id, &forms, &mut expansions, &mut path) {
            return Some(problem);
        }
    }
    None
}

/// One form: the forms its resources name, and how many `Do` operators its content has.
struct Form {
    children: Vec<ObjectId>,
    draws: u64,
}

impl Form {
    fn of(document: &Document, object: &Object) -> Option<Form> {
        let stream = object.as_stream().ok()?;
        if stream.dict.get(b"Subtype").and_then(Object::as_name).ok()? != b"Form" {
            return None;
        }
        let resources = stream.dict.get(b"Resources").ok().map(|r| document.dereference(r));
        let xobjects = match resources {
            Some(Ok((_, resources))) => resources
                .as_dict()
                .ok()
                .and_then(|dict| dict.get(b"XObject").ok())
                .and_then(|x| document.dereference(x).ok())
                .and_then(|(_, x)| x.as_dict().ok()),
            _ => None,
        };
        let children =
            xobjects.map(|dict| dict.iter().filter_map(|(_, v)| v.as_reference().ok()).collect());
        // The content as stored when it cannot be decompressed: a count of `Do` in it is an
        // over-estimate at worst.
        let content = stream.decompressed_content().unwrap_or_else(|_| stream.content.clone());
        let draws = content
            .windows(3)
            .filter(|w| w[..2] == *b"Do" && !w[2].is_ascii_alphanumeric())
            .count();
        Some(Form { children: children.unwrap_or_default(), draws: draws as u64 })
    }
}

/// How many drawings form `id` expands to, at most (memoized in `done`); an error when the
/// forms loop, nest too deep, or expand too far. `path` is the chain being followed.
fn expand(
    id: ObjectId,
    forms: &HashMap<ObjectId, Form>,
    done: &mut HashMap<ObjectId, u64>,
    path: &mut Vec<ObjectId>,
) -> Result<u64, String> {
    if let Some(known) = done.get(&id) {
        return Ok(*known);
    }
    let Some(form) = forms.get(&id) else { return Ok(0) };
    if path.contains(&id) {
        return Err(format!("its drawing {} {} draws itself", id.0, id.1));
    }
    if path.len() >= MAX_DEPTH {
        return Err(format!("its drawings nest more than {MAX_DEPTH} deep"));
    }
    path.push(id);
    let mut deepest = 0u64;
    for child in &form.children {
        deepest = deepest.max(expand(*child, forms, done, path)?);
    }
    path.pop();
    let total = form.draws.saturating_mul(deepest.saturating_add(1));
    if total > MAX_EXPANSIONS {
        return Err(format!("its drawings expand to more than {MAX_EXPANSIONS} drawings"));
    }
    done.insert(id, total);
    Ok(total)
}
