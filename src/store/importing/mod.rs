//! Bringing history in from elsewhere: the generic import bookkeeping and the reader of a
//! lossless-claw `lcm.db`.

pub mod import;
pub mod lossless_claw;
