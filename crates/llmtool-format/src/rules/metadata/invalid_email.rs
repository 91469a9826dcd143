//! LT502: a creator e-mail that is not an address.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// `metadata.creator.email` is not an e-mail address.
    ///
    /// ```json
    /// "creator": { "name": "Ana", "email": "ana at example.org" }
    /// ```
    pub static INVALID_EMAIL = ("LT502", "invalid-email", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let creator = cx.tool.metadata.as_ref().and_then(|m| m.creator.as_ref());
    let Some(email) = creator.and_then(|c| c.email.as_ref()) else { return };
    if !email_address::EmailAddress::is_valid(&email.value) {
        out.push(
            Diagnostic::new(&INVALID_EMAIL, format!("`{}` is not an e-mail address", email.value))
                .at(email.span)
                .with_help("write it like `name@example.org`, or leave `email` out"),
        );
    }
}
