//! Rules about `metadata.parameters`.

pub mod invalid_image_parameter;
pub mod out_of_range;
pub mod text_parameter_on_image_tool;
