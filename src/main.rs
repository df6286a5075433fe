//! The `paver` command line (being written).
fn main() {}
