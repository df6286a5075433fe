//! The z3 SMT solver's C API, loaded at run time (see the crate's overview).
