//! Rules about the shape of the file: required and recommended fields, types, unknown keys.

pub mod chat_tool_turn;
pub mod chat_without_role_lines;
pub mod duplicate_function;
pub mod empty_prompt;
pub mod invalid_function_entry;
pub mod missing_metadata;
pub mod missing_recommended;
pub mod smart_tool;
pub mod text_before_first_turn;
pub mod unknown_builtin_function;
pub mod unknown_dlp_policy;
pub mod unmarked_chat;
