#!/usr/bin/env bash
# Algorithm location in all four settings, the hybrid scorer of each setting cross-validated
# by algorithm and trained on the other settings' candidate pools too, as the shipped scorer
# is (`beryl eval fit-ranker` fits it on all four).
#
#   scripts/eval-algo.sh OUT_DIR [eval algo options...]
#
# Pass 1 writes each setting's pools (OUT_DIR/{one,ren,multi,mixed}.jsonl); pass 2 ranks each
# setting with them and writes its report to OUT_DIR/<setting>.txt. The hybrid's indexes are
# built by pass 1 in the usual work folder; pass 2 adds those of other methods (the paper's
# ablations read other feature sets). The options go to both passes, so leave out
# --setting, --methods and the pool options; $METHODS (comma-separated) picks the second
# pass's methods (default: all). `beryl` is target/release/beryl unless $BERYL is set.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 OUT_DIR [eval algo options...]" >&2; exit 2; }
out=$1; shift
repo=$(cd "$(dirname "$0")/.." && pwd)
beryl=${BERYL:-$repo/target/release/beryl}
mkdir -p "$out"
settings=(one ren multi mixed)
args_of() {
    case $1 in
        one) echo "--setting one" ;;
        ren) echo "--setting one --renamed" ;;
        multi) echo "--setting multi" ;;
        mixed) echo "--setting mixed" ;;
    esac
}
for s in "${settings[@]}"; do
    echo "pools: $s" >&2
    # shellcheck disable=SC2046
    "$beryl" eval algo $(args_of "$s") --methods hybrid --pools-out "$out/$s.jsonl" "$@" >"$out/$s.pools.txt"
done
for s in "${settings[@]}"; do
    others=()
    for o in "${settings[@]}"; do [ "$o" = "$s" ] || others+=("$out/$o.jsonl"); done
    echo "ranked: $s" >&2
    # shellcheck disable=SC2046
    "$beryl" eval algo $(args_of "$s") ${METHODS:+--methods "$METHODS"} --train-pools "${others[@]}" "$@" >"$out/$s.txt"
    # The summary's hybrid rows (each language, and all of them together where there are several).
    rows=$(awk -v s="$s" '/^Summary/ { f = 1 } f && $2 == "hybrid" { print s "  " $0 }' "$out/$s.txt")
    [ -n "$rows" ] || { echo "$s: no hybrid summary in $out/$s.txt (keep hybrid in \$METHODS; no --json)" >&2; exit 1; }
    echo "$rows"
done
