//! Applying the edits of fixes to source text.

use crate::diagnostic::{Diagnostic, Edit};

/// Applies the safe fixes of `diagnostics` to `text`. A fix whose edits overlap an earlier
/// accepted fix is left for the next round (the caller re-checks and calls again). Returns the
/// new text and the number of fixes applied.
pub fn apply_safe_fixes(text: &str, diagnostics: &[Diagnostic]) -> (String, usize) {
    let mut fixes: Vec<&[Edit]> = diagnostics
        .iter()
        .filter_map(|d| d.fix.as_ref())
        .filter(|fix| fix.safe && !fix.edits.is_empty())
        .map(|fix| fix.edits.as_slice())
        .collect();
    fixes.sort_by_key(|edits| edits.iter().map(|e| e.span.start).min());
    let mut accepted: Vec<&Edit> = Vec::new();
    let mut applied = 0;
    for edits in fixes {
        let overlaps = edits.iter().any(|edit| accepted.iter().any(|taken| touches(edit, taken)));
        if !overlaps
            && edits
                .iter()
                .all(|e| text.is_char_boundary(e.span.start) && text.is_char_boundary(e.span.end))
        {
            accepted.extend(edits);
            applied += 1;
        }
    }
    accepted.sort_by_key(|edit| (edit.span.start, edit.span.end));
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for edit in accepted {
        out.push_str(&text[from..edit.span.start]);
        out.push_str(&edit.replacement);
        from = edit.span.end;
    }
    out.push_str(&text[from..]);
    (out, applied)
}

/// Whether two edits conflict: they overlap, or both insert at the same offset.
fn touches(a: &Edit, b: &Edit) -> bool {
    (a.span.start < b.span.end && b.span.start < a.span.end) || a.span.start == b.span.start
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse;

    #[test]
    fn repairs_commas_in_one_round() {
        let text = "{\"a\": [1 2,], \"b\": 3,}";
        let (fixed, applied) = apply_safe_fixes(text, &parse(text).diagnostics);
        assert_eq!(fixed, "{\"a\": [1, 2], \"b\": 3}");
        assert_eq!(applied, 3);
        assert!(parse(&fixed).diagnostics.is_empty());
    }
}
