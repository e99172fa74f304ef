//! The daemon's assembly (work in progress).
pub mod store;
