//! `beryl corpus …`: real corpora from Debian source packages, PyPI and crates.io.

use anyhow::{Context, Result};
use beryl::corpus::fetch;
use clap::Subcommand;

#[derive(Subcommand)]
pub enum CorpusCmd {
    /// Download and unpack source packages (cached); prints each unpacked path. A name is a
    /// Debian source package, `pypi:NAME==VERSION` or `crate:NAME@VERSION`.
    Fetch {
        #[arg(required = true)]
        names: Vec<String>,
    },
}

pub fn run(cmd: CorpusCmd) -> Result<()> {
    match cmd {
        CorpusCmd::Fetch { names } => {
            for n in names {
                let p = fetch::fetch(&n).with_context(|| format!("fetching corpus {n}"))?;
                println!("{}", p.display());
            }
            Ok(())
        }
    }
}
