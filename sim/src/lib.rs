//! Functional PTX execution and the cycle-level GPU timing model.
//!
//! Not built yet: the interpreter is issue 5 and the timing model issue 6; the crate
//! currently exports nothing.
