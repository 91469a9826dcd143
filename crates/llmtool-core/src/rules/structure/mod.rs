//! Rules about the shape of the file: required and recommended fields, types, unknown keys.

pub mod empty_prompt;
pub mod missing_metadata;
pub mod missing_recommended;
pub mod smart_tool;
pub mod unknown_dlp_policy;
