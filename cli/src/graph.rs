//! `beryl graph`: control-flow graphs of functions, or statistics of a corpus.

use crate::args::Walk;
use anyhow::{bail, Result};
use beryl::corpus;
use beryl::report;
use clap::ValueEnum;

#[derive(Copy, Clone, ValueEnum)]
pub enum GraphFormat {
    Dot,
    Json,
    Stats,
}

pub fn run(walk: Walk, function: Option<String>, format: Option<GraphFormat>, json: bool) -> Result<()> {
    walk.check()?;
    let c = corpus::load(&walk.paths, &walk.options());
    let format = format.unwrap_or(if function.is_some() { GraphFormat::Dot } else { GraphFormat::Stats });
    match (format, function) {
        (GraphFormat::Stats, _) => {
            let s = c.stats();
            if json {
                println!("{}", serde_json::to_string_pretty(&s)?);
            } else {
                print!("{}", report::graph::stats_text(&s));
            }
        }
        (_, None) => bail!("--format dot/json needs --function NAME"),
        (f, Some(name)) => {
            let ids: Vec<u32> = c.icfg.functions_named(&name).map(|(i, _)| i).collect();
            if ids.is_empty() {
                bail!("no function named {name:?} in {} functions", c.icfg.functions.len());
            }
            match f {
                GraphFormat::Dot => print!("{}", report::graph::functions_dot(&c.icfg, &ids)),
                _ => println!("{}", report::graph::functions_json(&c.icfg, &ids)),
            }
        }
    }
    Ok(())
}
