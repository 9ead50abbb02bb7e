// An enum the spec holds as it is, but private: the generated deep copies and apply
// configurations could not name it. One error, though two generators need it.
pub mod v1;
