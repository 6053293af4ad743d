#!/usr/bin/env bash
# The sharded path on one machine: a 2-node Ray cluster in a network namespace of its own
# (only loopback up, so nothing leaves 127.0.0.1), the corpora built as shards on Ray,
# served on Ray Serve, compared query by query with one index of the same corpora, and
# put through faults. Everything it starts is stopped by process id at the end.
#
#   bash scripts/cluster-demo.sh CORPUS...      (each CORPUS directory is one project)
#
# Needs root (network namespaces) and Ray (bash scripts/setup.sh --with-cluster); without
# either it says so and exits with status 77. SHARDS (default 3), BERYL, BERYL_RAY.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ $# -ge 1 ] || { echo "usage: $0 CORPUS..." >&2; exit 2; }
BERYL=$(realpath -m "${BERYL:-target/release/beryl}")
RAY=${BERYL_RAY:-/opt/beryl/ray}
SHARDS=${SHARDS:-3}
[ -x "$BERYL" ] || { echo "no beryl at $BERYL: cargo build --release" >&2; exit 2; }
[ -x "$RAY/bin/ray" ] || { echo "skip: Ray is not installed at $RAY (bash scripts/setup.sh --with-cluster)"; exit 77; }
CORPORA=()
for c in "$@"; do CORPORA+=("$(realpath "$c")"); done
NS=beryl-demo-$$
command -v ip >/dev/null || { echo "skip: no ip command (Debian package iproute2)"; exit 77; }
if ! ip netns add "$NS" 2>/dev/null; then
    echo "skip: cannot create a network namespace here (needs root or CAP_SYS_ADMIN)"
    exit 77
fi
WORK=$(mktemp -d /tmp/beryl-cluster-demo.XXXXXX)
stop() {
    local status=$? pids
    if [ $status -ne 0 ]; then
        # What failed, before the logs go with the work folder.
        for f in "$WORK"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done
    fi
    pids=$(ip netns pids "$NS" 2>/dev/null || true)
    # Some Ray daemons ignore SIGTERM.
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null || true
    ip netns delete "$NS" 2>/dev/null || true
    rm -rf "$WORK"
}
trap stop EXIT
ip -n "$NS" link set lo up
in_ns() { ip netns exec "$NS" "$@"; }
PY=$RAY/bin/python
HEAD=127.0.0.1:6380
WORKER_PORT=46380
say() { printf '== %s\n' "$*"; }

say "Ray: head and worker node in network namespace $NS (loopback only)"
t0=$(date +%s%N)
in_ns "$RAY/bin/ray" start --head --node-ip-address=127.0.0.1 --port=6380 --num-cpus=1 --include-dashboard=false --disable-usage-stats >"$WORK/ray-head.log" 2>&1
in_ns "$RAY/bin/ray" start --address=$HEAD --node-ip-address=127.0.0.1 --num-cpus=1 --node-manager-port=$WORKER_PORT --disable-usage-stats >"$WORK/ray-worker.log" 2>&1
echo "cluster up in $(( ($(date +%s%N) - t0) / 1000000 )) ms"

say "build: global parts, $SHARDS shards as Ray tasks, statistics reduce"
in_ns "$PY" scripts/cluster/driver.py --address $HEAD --out "$WORK/shards" --shards "$SHARDS" --beryl "$BERYL" "${CORPORA[@]}" >"$WORK/build.log" 2>&1
python3 - "$WORK/shards/build.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"global parts {r['global']['seconds']:.1f} s; reduce {r['reduce_seconds']:.1f} s; wall {r['wall_seconds']:.1f} s; critical path {r['critical_path_seconds']:.1f} s")
for s in r["shards"]:
    print(f"  {s['index'].rsplit('/', 1)[-1]}: {s['projects']} project(s), {s['lines']} lines, {s['seconds']:.1f} s on node {s['node'][:8]}")
PY
mapfile -t DIRS < <(python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["shard_dirs"]))' "$WORK/shards/build.json")
SHARD_ARGS=()
for d in "${DIRS[@]}"; do SHARD_ARGS+=(--shard "$d"); done

say "one index of the same corpora, with the same global parts (the comparison)"
"$BERYL" index --global "$WORK/shards/global" --index "$WORK/one" "${CORPORA[@]}" 2>"$WORK/one.log" | tail -1

say "serve: ${#DIRS[@]} shard deployments x 2 replicas and a coordinator on Ray Serve"
in_ns "$PY" scripts/cluster/serve.py --address $HEAD --global "$WORK/shards/global" "${SHARD_ARGS[@]}" --replicas 2 --timeout 5 --beryl "$BERYL" 2>"$WORK/serve.log" | tail -1
URL=http://127.0.0.1:8000/search

say "every query of queries/ and English queries: one index, shards in one process, shards on Ray Serve"
in_ns "$BERYL" bench cluster --index "$WORK/one" --global "$WORK/shards/global" "${SHARD_ARGS[@]}" --url $URL 2>"$WORK/bench.log"

say "memory"
in_ns "$PY" - "$URL" <<'PY'
import json, sys, urllib.request
r = json.loads(urllib.request.urlopen(urllib.request.Request(sys.argv[1], data=b'{"stats": true}')).read())
c = r["coordinator"]
print(f"coordinator: {c['beryl_rss_mb']:.0f} MiB resident (encoders, graph model, scorer; no shard data)")
for s in r["shards"]:
    print(f"shard server {s['index'].rsplit('/', 1)[-1]}: {s['beryl_rss_mb']:.0f} MiB resident")
PY

say "faults"
Q=$(realpath queries/bfs.p)
in_ns "$PY" scripts/cluster/faults.py replica --address $HEAD --url $URL --query "$Q" 2>>"$WORK/faults.log"
in_ns "$PY" scripts/cluster/faults.py stall --url $URL --query "$Q" --shard 0 --shards-dir "$WORK/shards" --timeout 5 2>>"$WORK/faults.log"
in_ns "$PY" scripts/cluster/faults.py node --address $HEAD --out "$WORK/rebuild" --worker-port $WORKER_PORT --shards "$SHARDS" --beryl "$BERYL" "${CORPORA[@]}" 2>>"$WORK/faults.log"
say "stopping $(ip netns pids "$NS" | wc -w) processes by id"
