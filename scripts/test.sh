#!/usr/bin/env bash
# Sets up the machine (idempotent) and runs the whole test suite.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh --with-training --with-cluster
cargo test --release --locked "$@"
