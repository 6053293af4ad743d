#!/usr/bin/env bash
# How indexing cost grows with the corpus: indexes slices of Debian's Linux 6.1 source
# (about 0.25, 1 and 5 M lines, then the whole tree) and prints, for each, the lines, the
# wall time and lines/s, the peak resident memory (from /usr/bin/time -v, as every memory
# figure in the docs), the index size against the source, the time to open the index and
# the query latency p50/p95 (`beryl bench search`, which runs each query of queries/).
#
#   bash scripts/bench-scale.sh OUT [SLICE...]
#
# SLICE is one of 0.25m 1m 5m all (default: all four, smallest first). Extra `beryl index`
# arguments go in $INDEX_ARGS (`--function-encoder static` leaves the function encoder's
# time out). Each slice's index is kept under OUT/<slice>, its logs beside it; a slice
# whose index is in place is searched again, not rebuilt.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:?usage: bench-scale.sh OUT [SLICE...]}
shift
slices=("$@")
[ ${#slices[@]} -gt 0 ] || slices=(0.25m 1m 5m all)
beryl=${BERYL:-$PWD/target/release/beryl}
[ -x "$beryl" ] || { echo "no beryl at $beryl (cargo build --release, or set BERYL)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
kernel=$("$beryl" corpus fetch linux)

dirs_of() {
    case $1 in
        0.25m) echo lib ipc init ;;
        1m) echo kernel mm lib block crypto ;;
        5m) echo kernel mm fs lib net block crypto ipc security init include ;;
        all) echo . ;;
        *) echo "unknown slice $1 (0.25m 1m 5m all)" >&2; exit 2 ;;
    esac
}

printf '%-6s %10s %9s %8s %8s %9s %7s %8s %9s %9s %9s\n' slice lines seconds lines/s peak index ×source open_ms hybrid50 hybrid95 english50
for s in "${slices[@]}"; do
    dirs=$(dirs_of "$s")
    ix="$out/$s"
    log="$out/$s.index.log"
    if [ ! -e "$ix/current" ]; then
        # shellcheck disable=SC2086
        (cd "$kernel" && /usr/bin/time -v "$beryl" index $dirs --index "$ix" ${INDEX_ARGS:-}) >"$out/$s.index.out" 2>"$log"
    fi
    summary=$(grep -h ' lines, ' "$out/$s.index.out" | tail -1)
    lines=$(sed -E 's/.* ([0-9]+) lines, .*/\1/' <<<"$summary")
    secs=$(sed -E 's/.* indexed in ([0-9.]+) s .*/\1/' <<<"$summary")
    ratio=$(sed -E 's/.* = ([0-9.]+) × source.*/\1/' <<<"$summary")
    peak_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
    size=$(du -sbL "$ix/current" | cut -f1)
    "$beryl" bench search --index "$ix" --repeat 1 >"$out/$s.search.out" 2>&1
    # `index … opened in 778 ms`, `pseudo hybrid  p50  88.0 ms  p95  140.2 ms  (…)`
    open_ms=$(sed -nE 's/^index .* opened in ([0-9.]+) ms.*/\1/p' "$out/$s.search.out")
    p50=$(sed -nE 's/^pseudo hybrid +p50 +([0-9.]+) ms +p95 +([0-9.]+) ms.*/\1/p' "$out/$s.search.out")
    p95=$(sed -nE 's/^pseudo hybrid +p50 +([0-9.]+) ms +p95 +([0-9.]+) ms.*/\2/p' "$out/$s.search.out")
    en50=$(sed -nE 's/^natural lang\. +p50 +([0-9.]+) ms.*/\1/p' "$out/$s.search.out")
    awk -v s="$s" -v l="$lines" -v t="$secs" -v kb="$peak_kb" -v b="$size" -v r="$ratio" -v o="${open_ms:-?}" \
        -v p="${p50:-?}" -v q="${p95:-?}" -v e="${en50:-?}" \
        'BEGIN { printf "%-6s %10s %9s %8.0f %5.2fGiB %7.1fMB %7s %8s %9s %9s %9s\n", s, l, t, l / t, kb / 1048576, b / 1e6, r, o, p, q, e }'
done
