#!/usr/bin/env bash
# The main job on a real corpus: set up, fetch igraph (C) from Debian's sources, index it,
# and ask it for Floyd–Warshall twice: as textbook pseudocode and in plain English.
# The first index of a corpus runs the code-search encoder over every function (about a
# minute for igraph on 2 cores); re-running it is incremental.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
cargo build --release --locked -q
beryl=target/release/beryl
corpus=$("$beryl" corpus fetch "${1:-igraph}")
index="${BERYL_DEMO_INDEX:-$HOME/.cache/beryl/demo-index}"
echo "== index $corpus"
"$beryl" index "$corpus" --index "$index"
echo "== pseudocode query: queries/floyd-warshall.txt"
cat queries/floyd-warshall.txt
"$beryl" search --pseudo queries/floyd-warshall.txt --index "$index" --top 5
echo "== natural-language query"
"$beryl" search "all-pairs shortest path lengths (Floyd-Warshall)" --index "$index" --top 5
