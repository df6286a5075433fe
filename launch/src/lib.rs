//! Launch description (being written).
