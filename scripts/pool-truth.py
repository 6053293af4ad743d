#!/usr/bin/env python3
"""Draw the next pool of fragments to judge for bench/algo/pooled.json.

Usage: scripts/pool-truth.py RUN_JSON... [--depth N] [--methods m1,m2,...] [--out FILE]

RUN_JSON is the output of `beryl eval algo --json` (with `--pooled bench/algo/pooled.json`
so that what is judged already counts). From every row, each listed method's first
`--depth` fragments (default 3; methods default hybrid,bm25,name,bm25f) that rank above that
method's first hit and touch no entry or decoy of the row's algorithm, in the truth or in
the pooled judgment, are written once each to FILE (default: standard output) as a JSON
list: algorithm, project, path, lines ("a-b"), and file (the source to read). The method
that returned a fragment is left out, so the judgment is blind to it.

Judge each by the standard of bench/algo/README.md and add it to pooled.json's `entries`
or `decoys`. Python 3 standard library only.
"""

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
check = __import__("check-truth")


def main(argv):
    runs, depth, methods, out = [], 3, ["hybrid", "bm25", "name", "bm25f"], None
    it = iter(argv)
    for a in it:
        if a == "--depth":
            depth = int(next(it, "3"))
        elif a == "--methods":
            methods = next(it, "").split(",")
        elif a == "--out":
            out = next(it, None)
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            runs.append(a)
    if not runs:
        print(__doc__, file=sys.stderr)
        return 2
    truth = json.loads((REPO / "bench" / "algo" / "truth.json").read_text())
    pooled = json.loads((REPO / "bench" / "algo" / "pooled.json").read_text())
    known = truth["entries"] + truth["decoys"] + pooled["entries"] + pooled["decoys"]
    roots = {c["name"]: check.find_root(c, {}, False) for c in truth["corpora"]}

    def touches(alg, proj, path, a, b):
        return any(e["algorithm"] == alg and e["project"] == proj and e["path"] == path and a <= e["end_line"] and b >= e["start_line"] for e in known)

    items, seen = [], set()
    for run in runs:
        report = json.loads(Path(run).read_text())
        for row in report["rows"]:
            alg = row["algorithm"]
            for mi, m in enumerate(report["methods"]):
                if m not in methods:
                    continue
                first = row["ranks"][mi]
                for k, desc in enumerate(row["top"][mi][:depth]):
                    if first is not None and k + 1 >= first:
                        break
                    proj, rest = desc.split(":", 1)
                    path, lines = rest.rsplit(":", 1)
                    a, b = map(int, lines.split("-"))
                    if touches(alg, proj, path, a, b) or (alg, desc) in seen:
                        continue
                    seen.add((alg, desc))
                    root = roots.get(proj)
                    items.append({"algorithm": alg, "project": proj, "path": path, "lines": lines, "file": str(root / path) if root else None})
    text = json.dumps(items, indent=1)
    if out:
        Path(out).write_text(text + "\n")
        print(f"{len(items)} fragments to judge -> {out}", file=sys.stderr)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
