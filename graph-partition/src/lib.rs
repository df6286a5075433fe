//! Weighted TB graph -> ordered TB groups (MST-TS, Kway-TS, RB-TS and the baseline orders).
//!
//! Not built yet: this crate is the subject of issue 4 and currently exports nothing.
