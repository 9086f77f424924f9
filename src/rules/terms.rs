//! `Terms`: the contract a round is decided by, with its scope compiled.
//! Every rule and guard takes it whole, so a new contract setting reaches
//! the rules without being copied here. Pure.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::contract::Contract;

/// The contract terms a round is decided by.
pub struct Terms {
    /// The contract in force, its `max_rounds` the round cap in force.
    pub contract: Contract,
    scope: GlobSet,
}

impl Terms {
    /// The terms of `contract` with the round cap in force.
    pub fn of(contract: &Contract, max_rounds: u32) -> Result<Terms, globset::Error> {
        let mut scope = GlobSetBuilder::new();
        for glob in &contract.scope {
            // `*` stays inside one folder; `**` crosses folders.
            scope.add(GlobBuilder::new(glob).literal_separator(true).build()?);
        }
        let mut contract = contract.clone();
        contract.max_rounds = max_rounds;
        Ok(Terms {
            contract,
            scope: scope.build()?,
        })
    }

    /// The paths of `files` outside the scope.
    pub fn out_of_scope(&self, files: &[String]) -> Vec<String> {
        files
            .iter()
            .filter(|f| !self.scope.is_match(f.as_str()))
            .cloned()
            .collect()
    }
}
