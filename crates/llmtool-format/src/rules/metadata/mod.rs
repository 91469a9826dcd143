//! Rules about the descriptive metadata: timestamp, creator, avatar.

pub mod avatar_dimensions;
pub mod avatar_too_large;
pub mod incomplete_avatar;
pub mod invalid_avatar_image;
pub mod invalid_avatar_url;
pub mod invalid_email;
pub mod invalid_timestamp;
pub mod unknown_avatar_type;
