//! Benchmarks: metrics, baselines and runners.
