#!/usr/bin/env bash
# The main job on a real corpus: set up, fetch igraph (C) from Debian's sources, and
# print its interprocedural CFG statistics and the CFG of its Floyd–Warshall routine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
cargo build --release --locked -q
beryl=target/release/beryl
corpus=$("$beryl" corpus fetch "${1:-igraph}")
echo "== ICFG statistics of $corpus"
"$beryl" graph "$corpus" --format stats
echo "== CFG of igraph_distances_floyd_warshall (DOT, first lines)"
"$beryl" graph "$corpus" --function igraph_distances_floyd_warshall --format dot | head -n 40
