//! The ledger: rows and the hash chain (pure) and the store: lock, append,
//! fsync, evidence (I/O).

pub mod chain;
pub mod lock;
pub mod row;
pub mod store;

pub use row::{Counts, Draft, Kind, Row, Verdict};
pub use store::{Evidence, Store, StoreError};
