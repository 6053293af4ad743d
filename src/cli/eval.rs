//! `beryl eval …`: benchmark runners.

use anyhow::Result;
use clap::Subcommand;

#[derive(Subcommand)]
pub enum EvalCmd {}

pub fn run(cmd: EvalCmd) -> Result<()> {
    match cmd {}
}
