#!/usr/bin/env bash
# The fault and abuse suite: every probe of cli/tests/abuse.rs against the real binary, then
# the fuzz targets of what reads untrusted input: the MCP server's request screening
# (mcp_request), the readers of an index's own files (index_readers) and the front ends of
# every language (source), each for SECONDS (default 300), seeded with real requests, the
# files of a real index and real source files.
#
#   bash scripts/abuse.sh [SECONDS]
#   TARGETS=index_readers bash scripts/abuse.sh 60     # one fuzz target only
#
# Prints, per target, the runs made, the seconds and the crashes found (each crash also
# leaves its input under fuzz/artifacts/TARGET/); exits non-zero on a failed test or a crash.
# Needs scripts/setup.sh once; installs cargo-fuzz from crates.io when it is missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
SECONDS_EACH=${1:-300}

echo "== the abuse suite (cli/tests/abuse.rs)"
cargo test --release --locked -p beryl-cli --test abuse

command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
cargo build --release --locked -p beryl-cli --bin beryl
BERYL=$PWD/target/release/beryl
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# Seeds: a real index of three igraph files, each of its files behind the byte that picks
# its reader, and real requests of an MCP session.
SRC=$("$BERYL" corpus fetch igraph)/src/paths
mkdir -p "$WORK/src"
cp "$SRC"/floyd_warshall.c "$SRC"/bellman_ford.c "$SRC"/unweighted.c "$WORK/src/"
"$BERYL" index "$WORK/src" --index "$WORK/idx" >/dev/null
GEN="$WORK/idx/$(readlink "$WORK/idx/current")"
mkdir -p "$WORK/seeds/index_readers" "$WORK/seeds/mcp_request"
i=0
for f in graph.bin shapes.bin lexical.bin icfg.bin nodes.pca meta.json; do
    if [ -f "$GEN/$f" ]; then
        { printf "\\x$(printf %02x $i)"; cat "$GEN/$f"; } >"$WORK/seeds/index_readers/$f"
    fi
    i=$((i + 1))
done
n=0
while IFS= read -r line; do
    n=$((n + 1))
    printf '%s' "$line" >"$WORK/seeds/mcp_request/$n"
done <<'EOS'
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":1,"method":"tools/list"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_pseudocode","arguments":{"query":"F(A)\n  for i = 1 to n\n    x = A[i]","top":3}}}
{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"show","arguments":{"path":"src/a.c","lines":"1-9"}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"status","arguments":"x"}}
[{"jsonrpc":"2.0","id":5,"method":"ping"}]
EOS

# Source files of every language read, each behind the byte that picks its extension
# (the order of FILES in fuzz_targets/source.rs: .c .cc .h .java .py .rs .go).
mkdir -p "$WORK/seeds/source"
JAMA=$("$BERYL" corpus fetch jama)
SMETRICS=$("$BERYL" corpus fetch golang-github-xrash-smetrics)
seed() { { printf "\\x$(printf %02x "$1")"; cat "$2"; } >"$WORK/seeds/source/$1-$(basename "$2")"; }
seed 0 "$SRC/floyd_warshall.c"
seed 1 "$(dirname "$SRC")/centrality/prpack.cpp"
seed 2 "$(dirname "$SRC")/core/indheap.h"
seed 3 "$(find "$JAMA" -name LUDecomposition.java | head -1)"
seed 4 scripts/pool-cv.py
seed 5 src/lang/builder/rust.rs
seed 6 "$(find "$SMETRICS" -name jaro.go | head -1)"

status=0
cd fuzz
# The fuzz binaries link libtorch through the library without the command line's rpath.
NATIVE=${BERYL_NATIVE:-/opt/beryl}
export LD_LIBRARY_PATH=${LIBTORCH:-$NATIVE/torch/torch}/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for target in ${TARGETS:-mcp_request index_readers source}; do
    echo "== fuzzing $target for $SECONDS_EACH s"
    mkdir -p "corpus/$target"
    log="$WORK/$target.log"
    if RUSTC_BOOTSTRAP=1 cargo fuzz run -O "$target" "corpus/$target" "$WORK/seeds/$target" -- \
        -max_total_time="$SECONDS_EACH" -rss_limit_mb=4096 -max_len=1048576 -print_final_stats=1 >"$log" 2>&1; then
        crashes=0
    else
        crashes=1
        status=1
    fi
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
    echo "$target: ${runs:-?} runs in $SECONDS_EACH s, $crashes crash(es)"
    if [ "$crashes" -ne 0 ]; then
        tail -n 40 "$log"
    fi
done
exit $status
