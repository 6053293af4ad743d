#!/usr/bin/env python3
"""Screen a change to the hybrid scorer's signals on saved candidate pools, in seconds.

Usage: scripts/pool-cv.py DIR... [--seeds 0,1,2] [--single SETTING]

DIR holds one.jsonl, ren.jsonl, multi.jsonl and mixed.jsonl, the `--pools-out` files of
`beryl eval algo --methods hybrid` for `--setting one`, `one --renamed`, `multi` and `mixed`.
Each setting is ranked by linear pairwise scorers fitted on the other folds' pools of all
four settings, folds split by algorithm (6), as `beryl eval algo` does; it prints MRR and
hit@10 (mean over algorithms of the mean over their rows) for the fixed folds and, with
more seeds, the mean over shuffled fold assignments. `--single SETTING` ranks that
setting's pools by each signal alone instead (what a signal carries by itself).

A screen, not the figure: it leaves out two rules of `src/eval/pool.rs` (results wholly in
tests listed last, fragments mostly shown above left out), so its figures differ from those
`beryl eval algo` prints by up to 0.02 (on the pools of `docs/eval/algo-runs/2026-11-27e`:
one 0.672 / hit@10 0.804 here against 0.673 / 0.820). Needs numpy.
"""

import json
import random
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
SETTINGS = ["one", "ren", "multi", "mixed"]
# The signal names in the scorer's order, as the shipped scorer's manifest lists them (the
# binary refuses a scorer whose names differ from its own).
FEATURES = json.loads((REPO / "models/ranker/manifest.json").read_text())["features"]
GROWN = FEATURES.index("grown")


def load(d):
    return {s: [json.loads(l) for l in open(f"{d}/{s}.jsonl") if l.strip()] for s in SETTINGS}


def fit(pools, l2=1e-3):
    """Logistic regression on (hit - miss) feature differences, each pool weighing 1."""
    X = np.array([c["x"] for p in pools for c in p["cands"]], dtype=np.float64)
    mean = X.mean(0)
    scale = np.maximum(np.sqrt(np.maximum((X**2).mean(0) - mean**2, 0)), 1e-6)
    cols = np.where(scale > 1e-6)[0]
    D, W = [], []
    for p in pools:
        xs = np.array([c["x"] for c in p["cands"]], dtype=np.float64)
        h = np.array([c["hit"] for c in p["cands"]])
        if h.all() or not h.any():
            continue
        z = ((xs - mean) / scale)[:, cols]
        d = (z[h][:, None, :] - z[~h][None, :, :]).reshape(-1, len(cols))
        D.append(d)
        W.append(np.full(len(d), 1.0 / len(d)))
    D, W = np.concatenate(D), np.concatenate(W)
    th = np.zeros(len(cols))
    for _ in range(50):
        pr = 1 / (1 + np.exp(-(D @ th)))
        g = D.T @ (W * (pr - 1)) + l2 * th
        H = (D * (W * np.maximum(pr * (1 - pr), 1e-12))[:, None]).T @ D + l2 * np.eye(len(cols))
        step = np.linalg.solve(H, g)
        th -= step
        if np.abs(step).max() < 1e-7:
            break
    w = np.zeros(X.shape[1])
    w[cols] = th
    return mean, scale, w


def overlaps(a, ag, b, bg):
    same = bool(a) and bool(b) and ag == bg and a[0][0] == b[0][0] and a[0][1] <= b[0][2] and b[0][1] <= a[0][2]
    return same or (bool(a) and a == b)


def order(p, scorer):
    """Candidates best first: overlapping ones dropped, copies folded into the best."""
    mean, scale, w = scorer
    C = p["cands"]
    sc = ((np.array([c["x"] for c in C], dtype=np.float64) - mean) / scale) @ w
    grown = lambda i: C[i]["x"][GROWN] != 0
    kept, shown = [], []
    for i in sorted(range(len(C)), key=lambda i: (-sc[i], i)):
        if any(overlaps(C[k]["keys"], grown(k), C[i]["keys"], grown(i)) for k in kept):
            continue
        cp = C[i].get("copy", 0)
        j = next((n for n, k in enumerate(kept) if cp and C[k].get("copy", 0) == cp), None)
        if j is not None:
            if C[i]["hit"] and not C[shown[j]]["hit"]:
                shown[j] = i
            continue
        if len(kept) < 100:
            kept.append(i)
            shown.append(i)
    return shown


def folds(algos, k, seed):
    a = sorted(algos)
    if seed:
        random.Random(seed).shuffle(a)
    return [set(a[i::k]) for i in range(k)]


def first_hit(p, scorer):
    return next((k + 1 for k, j in enumerate(order(p, scorer)) if p["cands"][j]["hit"]), None)


def summary(pools, ranks):
    per, per10 = defaultdict(list), defaultdict(list)
    for p, rk in zip(pools, ranks):
        per[p["algorithm"]].append(1 / rk if rk else 0)
        per10[p["algorithm"]].append(1 if rk and rk <= 10 else 0)
    return np.mean([np.mean(v) for v in per.values()]), np.mean([np.mean(v) for v in per10.values()])


def cross_validated(data, seed):
    algos = {p["algorithm"] for s in SETTINGS for p in data[s]}
    ranks = {s: [None] * len(data[s]) for s in SETTINGS}
    for fold in folds(algos, 6, seed):
        scorer = fit([p for s in SETTINGS for p in data[s] if p["algorithm"] not in fold])
        for s in SETTINGS:
            for i, p in enumerate(data[s]):
                if p["algorithm"] in fold:
                    ranks[s][i] = first_hit(p, scorer)
    return {s: summary(data[s], ranks[s]) for s in SETTINGS}


def main(argv):
    dirs, seeds, single = [], [0], None
    it = iter(argv)
    for a in it:
        if a == "--seeds":
            seeds = [int(x) for x in next(it, "0").split(",")]
        elif a == "--single":
            single = next(it, "ren")
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            dirs.append(a)
    if not dirs:
        print(__doc__, file=sys.stderr)
        return 2
    for d in dirs:
        data = load(d)
        print(d)
        if single:
            n = len(data[single][0]["cands"][0]["x"])
            for k in range(n):
                w = np.zeros(n)
                w[k] = 1.0
                mrr, _ = summary(data[single], [first_hit(p, (np.zeros(n), np.ones(n), w)) for p in data[single]])
                print(f"  {FEATURES[k] if k < len(FEATURES) else k:22s} {mrr:.3f}")
            continue
        runs = [cross_validated(data, s) for s in seeds]
        for s in SETTINGS:
            m, h = [r[s][0] for r in runs], [r[s][1] for r in runs]
            extra = f" | {len(seeds)} fold assignments MRR {np.mean(m):.3f} ±{np.std(m):.3f} hit@10 {np.mean(h):.3f}" if len(seeds) > 1 else ""
            print(f"  {s:6s} MRR {m[0]:.3f} hit@10 {h[0]:.3f}{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
