//! Static locality analysis of PTX kernels: CFG, dominators, loops, induction variables,
//! symbolic addresses, per-TB footprints, the TB locality graph, sharing statistics,
//! Locality Descriptors and reuse metrics.
//!
//! Not built yet: this crate is the subject of issue 3 and currently exports nothing.
