//! The ledger: rows and the hash chain (pure) and the store (I/O).
