//! PTX front-end (being written; see issue 2).
