"""Fault checks of a served sharded corpus (scripts/cluster-demo.sh runs them).

    python faults.py replica --address A --url URL --query Q     # a replica killed mid-query
    python faults.py stall   --address A --url URL --query Q --shard 2 --timeout 3
    python faults.py node    --address A --out DIR --worker-port P --beryl B CORPUS...

Each prints what it saw and exits non-zero when the cluster did not behave:
- replica: queries run while one replica of each shard is killed; every answer must be
  whole (no shard missing), the other replica answering;
- stall: every process of one shard is stopped; the answer must come within the per-shard
  timeout (plus the search itself) and name that shard as missing;
- node: the worker node is killed while it builds a shard; the build must finish, the
  shard built again on another node.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import ray


def post(url, body, timeout=120):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def query_body(path):
    with open(path) as f:
        return {"pseudo": f.read(), "name": os.path.basename(path), "top": 10}


def fail(msg):
    print(f"FAILED: {msg}", flush=True)
    sys.exit(1)


def replica(a):
    ray.init(address=a.address, logging_level="ERROR")
    body = query_body(a.query)
    want = post(a.url, body)["result"]["fragments"]
    answers, errors = [], []
    stop = threading.Event()

    def loop():
        while not stop.is_set():
            try:
                answers.append(post(a.url, body))
            except Exception as e:  # noqa: BLE001
                errors.append(str(e))

    t = threading.Thread(target=loop)
    t.start()
    time.sleep(1.0)
    killed = []
    for actor in ray.util.list_named_actors(all_namespaces=True):
        name = actor["name"]
        if "SERVE_REPLICA" in name and "#shard-" in name:
            shard = name.split("#shard-")[1].split("#")[0]
            if shard not in [k[0] for k in killed]:
                ray.kill(ray.get_actor(name, namespace=actor["namespace"]), no_restart=False)
                killed.append((shard, name))
    time.sleep(a.seconds)
    stop.set()
    t.join()
    whole = [r for r in answers if "result" in r and not r["result"].get("missing_shards")]
    same = [r for r in whole if r["result"]["fragments"] == want]
    print(f"replica: killed {len(killed)} replicas (one of each shard) while {len(answers)} queries ran: "
          f"{len(whole)} answered whole, {len(same)} equal to the answer before, {len(errors)} failed", flush=True)
    if errors or len(whole) != len(answers) or len(same) != len(answers) or not answers:
        fail(f"answers lost or partial: errors {errors[:3]}, partial {[r.get('result', r).get('missing_shards') for r in answers if r not in whole][:3]}")


def stall(a):
    # Every replica's process of the shard.
    pids = [int(p) for p in subprocess.run(["pgrep", "-f", f"cluster shard .*--index {a.shards_dir}/shard-{a.shard} --listen"], capture_output=True, text=True).stdout.split()]
    if not pids:
        fail(f"no process of shard {a.shard}")
    for p in pids:
        os.kill(p, signal.SIGSTOP)
    body = query_body(a.query)
    t = time.monotonic()
    try:
        r = post(a.url, body, timeout=a.timeout + 60)
    finally:
        for p in pids:
            try:
                os.kill(p, signal.SIGCONT)
            except ProcessLookupError:
                pass
    took = time.monotonic() - t
    missing = r.get("result", {}).get("missing_shards", [])
    n = len(r.get("result", {}).get("fragments", []))
    print(f"stall: shard {a.shard} stopped ({len(pids)} replica processes); answered in {took:.1f} s (per-shard timeout {a.timeout} s) with {n} results, missing {missing}", flush=True)
    if "result" not in r or not any(m.endswith(f"shard-{a.shard}") for m in missing) or n == 0:
        fail(f"expected results naming shard {a.shard} missing, got {json.dumps(r)[:300]}")
    if took > a.timeout + 30:
        fail(f"took {took:.1f} s")
    # The shard comes back: its processes continue (SIGCONT above); the connections the
    # coordinator gave up on are not used again.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        r = post(a.url, body)
        if "result" in r and not r["result"].get("missing_shards"):
            print(f"stall: whole answers again {time.monotonic() - t:.1f} s after the stop", flush=True)
            return
        time.sleep(1)
    fail("the shard did not come back")


def node(a):
    ray.init(address=a.address, logging_level="ERROR")
    worker = [n for n in ray.nodes() if n["Alive"] and n["NodeManagerPort"] == a.worker_port]
    if not worker:
        fail(f"no live node with node manager port {a.worker_port}")
    wid = worker[0]["NodeID"]
    here = os.path.dirname(os.path.abspath(__file__))
    os.makedirs(a.out, exist_ok=True)
    build = subprocess.Popen([sys.executable, os.path.join(here, "driver.py"), "--address", a.address, "--out", a.out,
                              "--shards", str(a.shards), "--beryl", a.beryl, *a.corpora], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Wait until the worker node has started a shard, then kill the node: its raylet and
    # every process it started.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any(f.endswith(wid) for f in os.listdir(a.out) if ".started-" in f):
        time.sleep(0.02)
    if time.monotonic() >= deadline:
        build.kill()
        fail("the worker node never started a shard: nothing to lose")
    raylet = subprocess.run(["pgrep", "-f", f"node_manager_port={a.worker_port}"], capture_output=True, text=True).stdout.split()
    victims = []
    for r in raylet:
        victims += subprocess.run(["pgrep", "-P", r], capture_output=True, text=True).stdout.split() + [r]
    for v in victims:
        try:
            os.kill(int(v), signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        out, err = build.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        build.kill()
        fail("the build did not finish within 600 s after the node was lost")
    if build.returncode != 0:
        fail(f"the build failed after the node was lost (exit {build.returncode}): {err[-3000:]}")
    try:
        with open(os.path.join(a.out, "build.json")) as f:
            report = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        fail(f"the build wrote no report ({e}): {err[-3000:]}")
    redone = [s for s in report["shards"] if s["node"] != wid]
    print(f"node: killed the worker node ({len(victims)} processes) while it built a shard; build finished in "
          f"{report['wall_seconds']:.1f} s, {len(report['shards'])} shards, {len(redone)} built on the surviving node", flush=True)
    if len(redone) != len(report["shards"]):
        fail("a shard is reported built on the lost node")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("replica")
    r.add_argument("--address", required=True)
    r.add_argument("--url", required=True)
    r.add_argument("--query", required=True)
    r.add_argument("--seconds", type=float, default=4.0)
    s = sub.add_parser("stall")
    s.add_argument("--url", required=True)
    s.add_argument("--query", required=True)
    s.add_argument("--shard", type=int, default=0)
    s.add_argument("--shards-dir", required=True, help="the folder holding shard-N/")
    s.add_argument("--timeout", type=float, required=True)
    n = sub.add_parser("node")
    n.add_argument("--address", required=True)
    n.add_argument("--out", required=True)
    n.add_argument("--worker-port", type=int, required=True)
    n.add_argument("--shards", type=int, default=3)
    n.add_argument("--beryl", required=True)
    n.add_argument("corpora", nargs="+")
    a = ap.parse_args()
    {"replica": replica, "stall": stall, "node": node}[a.cmd](a)


if __name__ == "__main__":
    main()
