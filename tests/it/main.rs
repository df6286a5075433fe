//! End-to-end CLI tests.
