//! Rules about `metadata.parameters`.

pub mod number_as_string;
pub mod out_of_range;
pub mod unknown_parameter;
