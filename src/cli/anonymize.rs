//! `beryl anonymize …`: consistent identifier rewriting.

use anyhow::Result;

#[derive(clap::Args)]
pub struct AnonymizeArgs {}

pub fn run(_args: AnonymizeArgs) -> Result<()> {
    anyhow::bail!("not built yet")
}
