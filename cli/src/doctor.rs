//! `beryl doctor`: check that the native parts load and compute.

use anyhow::{Context, Result};

pub fn run() -> Result<()> {
    for line in beryl::native::check().context("native runtime check failed")? {
        println!("{line}");
    }
    let p = beryl::features::Precision::auto();
    println!("text encoder linear layers: {p:?} (BERYL_ENCODER_PRECISION=f32|bf16 overrides; bf16 is the default where the CPU has AVX512-BF16)");
    Ok(())
}
