#!/usr/bin/env bash
# Rebuilds models/pcode-classifier.{bin,json}: mines code lines and comments from the two
# Debian source packages the shipped model used, then runs label propagation.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release --locked -q
beryl=target/release/beryl
"$beryl" pcode train-classifier \
    --c-corpus "$("$beryl" corpus fetch igraph)" \
    --java-corpus "$("$beryl" corpus fetch commons-math3)" \
    --out models/pcode-classifier.bin "$@"
