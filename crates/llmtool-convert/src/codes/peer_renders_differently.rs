//! `LT708` peer-renders-differently: the target renders this prompt differently from `llmtool
//! render`.

use llmtool_format::declare_rule;

declare_rule! {
    /// The target renders this prompt differently from `llmtool render`.
    ///
    /// Some peers change a prompt as they read it: Prompty splits messages at lines such as
    /// `system:` and trims the newlines around each message, for example. The export is still
    /// written; the warning says what the peer will do.
    pub static PEER_RENDERS_DIFFERENTLY = ("LT708", "peer-renders-differently", Warning);
}
