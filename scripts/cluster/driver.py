"""Builds a sharded beryl corpus on a Ray cluster.

1. plan: projects (each CORPUS path is one) go to shards by a hash of their name
   (`beryl cluster plan`);
2. the global pre-pass: projection and FAISS quantizers trained on a sample of every
   project (`beryl cluster global`), one task;
3. one task per shard (`beryl index --global`), on whichever node has a free CPU; a task
   whose node is lost runs again elsewhere (Ray retries it);
4. the statistics reduce (`beryl cluster reduce`): BM25F statistics and totals summed over
   the shards.

    python driver.py --address 127.0.0.1:6380 --out DIR [--shards N] CORPUS...
    python driver.py --address ... --out DIR --rebuild 2 CORPUS...   # one shard again

Every node must see the same paths (one machine, or a shared file system). Prints a JSON
report: per-shard build times and the critical path.
"""

import argparse
import json
import os
import subprocess
import time

import ray


def run(argv, die_with_worker=False):
    """Runs beryl. In a task it dies with the task's worker (`setpriv --pdeathsig`), so a lost
    node leaves no half-built shard behind that would hold the shard's lock against the retry."""
    if die_with_worker:
        argv = ["setpriv", "--pdeathsig", "KILL", "--", *argv]
    t = time.monotonic()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({p.returncode}): {p.stderr[-2000:]}")
    return p.stdout, time.monotonic() - t


@ray.remote(num_cpus=1, max_retries=3, retry_exceptions=False)
def global_parts(beryl, out, paths, sample_bytes):
    _, s = run([beryl, "cluster", "global", "--out", out, "--sample-bytes", str(sample_bytes), *paths], die_with_worker=True)
    return {"seconds": s, "node": ray.get_runtime_context().get_node_id()}


@ray.remote(num_cpus=1, max_retries=3, retry_exceptions=False)
def build_shard(beryl, global_dir, index, paths):
    node = ray.get_runtime_context().get_node_id()
    # Where each attempt ran, for whoever watches the build (the fault test).
    with open(f"{index}.started-{node}", "w"):
        pass
    _, s = run([beryl, "index", "--global", global_dir, "--index", index, "--json", *paths], die_with_worker=True)
    return {"index": index, "seconds": s, "node": ray.get_runtime_context().get_node_id(), "projects": len(paths)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--address", required=True)
    ap.add_argument("--out", required=True, help="holds global/ and shard-N/")
    ap.add_argument("--shards", type=int)
    ap.add_argument("--lines-per-shard", type=int, default=750_000)
    ap.add_argument("--rebuild", type=int, action="append", help="rebuild only this shard (repeat)")
    ap.add_argument("--sample-bytes", type=int, default=32 << 20, help="source the global parts are trained on")
    ap.add_argument("--beryl", default=os.environ.get("BERYL", "beryl"))
    ap.add_argument("corpora", nargs="+")
    a = ap.parse_args()
    beryl = os.path.abspath(a.beryl) if os.sep in a.beryl else a.beryl
    out = os.path.abspath(a.out)
    corpora = [os.path.abspath(c) for c in a.corpora]
    os.makedirs(out, exist_ok=True)
    t0 = time.monotonic()
    argv = [beryl, "cluster", "plan", *corpora, "--lines-per-shard", str(a.lines_per_shard)]
    if a.shards:
        argv += ["--shards", str(a.shards)]
    plan = json.loads(run(argv)[0])
    with open(os.path.join(out, "plan.json"), "w") as f:
        json.dump(plan, f, indent=2)
    # Tasks run in Ray's worker processes: beryl's settings (cache, encoders) go with them.
    env = {k: v for k, v in os.environ.items() if k.startswith("BERYL")}
    ray.init(address=a.address, logging_level="ERROR", runtime_env={"env_vars": env})
    g = os.path.join(out, "global")
    report = {"lines": plan["lines"], "shards": []}
    if not a.rebuild:
        report["global"] = ray.get(global_parts.remote(beryl, g, corpora, a.sample_bytes))
    todo = [i for i, s in enumerate(plan["shards"]) if s["projects"] and (not a.rebuild or i in a.rebuild)]
    tasks = [build_shard.remote(beryl, g, os.path.join(out, f"shard-{i}"), plan["shards"][i]["projects"]) for i in todo]
    for i, r in zip(todo, ray.get(tasks)):
        r["lines"] = plan["shards"][i]["lines"]
        report["shards"].append(r)
    dirs = [os.path.join(out, f"shard-{i}") for i, s in enumerate(plan["shards"]) if s["projects"]]
    t = time.monotonic()
    run([beryl, "cluster", "reduce", "--global", g, *dirs])
    report["reduce_seconds"] = time.monotonic() - t
    report["wall_seconds"] = time.monotonic() - t0
    report["critical_path_seconds"] = report.get("global", {}).get("seconds", 0) + max((s["seconds"] for s in report["shards"]), default=0) + report["reduce_seconds"]
    report["shard_dirs"] = dirs
    report["global_dir"] = g
    # Also in a file: Ray's own messages (a node lost, say) share the driver's output.
    with open(os.path.join(out, "build.json"), "w") as f:
        json.dump(report, f, indent=2)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
