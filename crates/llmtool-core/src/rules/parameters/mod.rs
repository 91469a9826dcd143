//! Rules about `metadata.parameters`.

pub mod out_of_range;
