#!/usr/bin/env python3
"""Check the algorithm-location ground truth against the fetched corpora.

Usage: scripts/check-truth.py [TRUTH_JSON] [--pooled POOLED_JSON] [--fetch] [--root NAME=DIR ...] [-q]

For every entry and decoy of TRUTH_JSON (default: bench/algo/truth.json) this checks
that the file exists under the corpus tree, that the 1-based inclusive line range lies
within the file, and that the function name appears in the first lines of the range --
or, for an entry that covers only part of a long function, that a definition of that
function above the range encloses it. It also checks the JSON shape, that every
algorithm has a query in queries/ and that every project is a listed corpus.

Corpus trees are found where `beryl corpus fetch PKG` puts them: the path recorded in
CACHE/corpora/PKG/.done, else CACHE/corpora/PKG/src/TOP_DIR, with CACHE = $BERYL_CACHE,
else $XDG_CACHE_HOME/beryl, else ~/.cache/beryl. `--fetch` runs `beryl corpus fetch`
($BERYL, else target/release/beryl) for corpora that are missing; `--root NAME=DIR`
points one corpus at a directory by hand. `--pooled` adds the entries and decoys of a pooled
judgment (bench/algo/pooled.json: `about`, `entries`, `decoys`) and checks them the same way.

Exit status: 0 when everything passes, 1 on any failure, 2 on usage errors.
Python 3 standard library only.
"""

import collections
import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HEAD_LINES = 6  # the name must occur within this many lines from start_line
MAX_BACK = 3000  # how far above start_line to look for an enclosing definition

CORPUS_KEYS = {"name", "debian_source_package", "version", "language", "orig_tarball", "top_dir"}
# A corpus from PyPI or crates.io names its registry spec in "source" (debian_source_package empty).
CORPUS_OPTIONAL = {"source"}
ENTRY_KEYS = {"algorithm", "project", "path", "function", "start_line", "end_line", "confidence", "note"}
DECOY_KEYS = {"algorithm", "project", "path", "function", "start_line", "end_line", "note"}


def cache_dir():
    if os.environ.get("BERYL_CACHE"):
        return Path(os.environ["BERYL_CACHE"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "beryl"
    return Path.home() / ".cache" / "beryl"


def cache_folder(spec):
    """The cache folder `beryl corpus fetch SPEC` unpacks into (src/corpus/fetch.rs)."""
    if spec.startswith("pypi:"):
        name, _, version = spec[5:].partition("==")
        return f"pypi-{name}-{version}"
    if spec.startswith("crate:"):
        name, _, version = spec[6:].partition("@")
        return f"crate-{name}-{version}"
    return spec


def find_root(corpus, overrides, fetch):
    name, pkg, top = corpus["name"], corpus.get("source") or corpus["debian_source_package"], corpus["top_dir"]
    if name in overrides:
        return Path(overrides[name])
    base = cache_dir() / "corpora" / cache_folder(pkg)
    done = base / ".done"
    if done.is_file():
        p = Path(done.read_text().strip())
        if p.is_dir():
            return p
    p = base / "src" / top
    if p.is_dir():
        return p
    if fetch:
        exe = os.environ.get("BERYL") or str(REPO / "target" / "release" / "beryl")
        try:
            out = subprocess.run([exe, "corpus", "fetch", pkg], capture_output=True, text=True, check=False)
        except OSError as e:
            print(f"  cannot run {exe}: {e}", file=sys.stderr)
            return None
        if out.returncode == 0 and out.stdout.strip() and Path(out.stdout.strip().splitlines()[-1]).is_dir():
            return Path(out.stdout.strip().splitlines()[-1])
        print(f"  fetching {pkg} failed: {out.stderr.strip()[-500:]}", file=sys.stderr)
    return None


def name_tokens(function):
    """The recorded name and its last component (after '::' or '.')."""
    toks = [function]
    last = re.split(r"::|\.", function)[-1]
    if last and last != function:
        toks.append(last)
    return toks


def block_end(lines, start):
    """1-based line where the first brace block opening at/after `start` closes."""
    depth, seen, in_block_comment = 0, False, False
    for i in range(start - 1, len(lines)):
        s, j, quote = lines[i], 0, None
        while j < len(s):
            c = s[j]
            if in_block_comment:
                if s.startswith("*/", j):
                    in_block_comment = False
                    j += 2
                    continue
                j += 1
                continue
            if quote:
                if c == "\\":
                    j += 2
                    continue
                if c == quote:
                    quote = None
                j += 1
                continue
            if s.startswith("//", j):
                break
            if s.startswith("/*", j):
                in_block_comment = True
                j += 2
                continue
            if c in "\"'":
                quote = c
            elif c == "{":
                depth += 1
                seen = True
            elif c == "}":
                depth -= 1
                if seen and depth == 0:
                    return i + 1
            j += 1
    return None


def check_item(item, root, lines_cache):
    """Returns (ok, kind, message); kind is 'head' or 'part' when ok."""
    f = root / item["path"]
    if not f.is_file():
        return False, None, f"missing file {item['path']}"
    if f not in lines_cache:
        lines_cache[f] = f.read_text(encoding="utf-8", errors="replace").split("\n")
        if lines_cache[f] and lines_cache[f][-1] == "":
            lines_cache[f].pop()
    lines = lines_cache[f]
    s, e = item["start_line"], item["end_line"]
    if not (isinstance(s, int) and isinstance(e, int)) or s < 1 or e < s or e > len(lines):
        return False, None, f"bad range {s}-{e} (file has {len(lines)} lines)"
    toks = name_tokens(item["function"])
    head = "\n".join(lines[s - 1 : min(e, s - 1 + HEAD_LINES)])
    if any(t in head for t in toks):
        return True, "head", ""
    # Part of a longer function: a definition above must enclose the range.
    pat = re.compile(r"(?<![\w.])(%s)\s*\(" % "|".join(re.escape(t) for t in toks))
    for i in range(s - 1, max(0, s - 1 - MAX_BACK), -1):
        line = lines[i - 1]
        if pat.search(line) and not line.rstrip().endswith(";"):
            end = block_end(lines, i)
            if end is not None and end >= e:
                return True, "part", ""
    return False, None, f"function name {item['function']!r} not in lines {s}-{s + HEAD_LINES - 1} and no enclosing definition above"


def main(argv):
    args, overrides, fetch, quiet, pooled = [], {}, False, False, None
    it = iter(argv)
    for a in it:
        if a == "--fetch":
            fetch = True
        elif a == "-q":
            quiet = True
        elif a == "--pooled":
            pooled = next(it, None)
            if not pooled:
                print("--pooled needs a file", file=sys.stderr)
                return 2
        elif a == "--root":
            k, _, v = next(it, "").partition("=")
            if not v:
                print("--root needs NAME=DIR", file=sys.stderr)
                return 2
            overrides[k] = v
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            args.append(a)
    truth_path = Path(args[0]) if args else REPO / "bench" / "algo" / "truth.json"
    truth = json.loads(truth_path.read_text())
    failures = []
    if pooled:
        extra = json.loads(Path(pooled).read_text())
        if set(extra) != {"about", "entries", "decoys"}:
            failures.append(f"{pooled}: keys {sorted(extra)} wrong (about, entries, decoys)")
        for k in ("entries", "decoys"):
            if isinstance(truth.get(k), list):
                truth[k] = truth[k] + extra.get(k, [])

    # Shape.
    for k in ("corpora", "entries", "decoys"):
        if not isinstance(truth.get(k), list):
            failures.append(f"top-level key {k!r} missing or not a list")
    if failures:
        print("\n".join(failures))
        return 1
    corpora = {}
    for c in truth["corpora"]:
        if not (CORPUS_KEYS <= set(c) <= CORPUS_KEYS | CORPUS_OPTIONAL):
            failures.append(f"corpus {c.get('name')}: keys {sorted(set(c) ^ CORPUS_KEYS)} wrong")
        corpora[c["name"]] = c
    queries = {p.stem for p in (REPO / "queries").glob("*.p")} | {p.stem for p in (REPO / "queries").glob("*.txt")}
    seen = set()
    for kind, items, keys in (("entry", truth["entries"], ENTRY_KEYS), ("decoy", truth["decoys"], DECOY_KEYS)):
        for x in items:
            tag = f"{kind} {x.get('project')}:{x.get('path')}:{x.get('start_line')} {x.get('algorithm')}"
            if set(x) != keys:
                failures.append(f"{tag}: keys {sorted(set(x) ^ keys)} wrong")
            if x.get("algorithm") not in queries:
                failures.append(f"{tag}: no query queries/{x.get('algorithm')}.p/.txt")
            if x.get("project") not in corpora:
                failures.append(f"{tag}: project not among corpora")
            if kind == "entry" and x.get("confidence") not in ("high", "medium"):
                failures.append(f"{tag}: confidence must be high or medium")
            k = (kind, x.get("algorithm"), x.get("project"), x.get("path"), x.get("start_line"), x.get("end_line"))
            if k in seen:
                failures.append(f"{tag}: duplicate")
            seen.add(k)

    # Files and ranges.
    roots = {}
    for name, c in corpora.items():
        roots[name] = find_root(c, overrides, fetch)
        if roots[name] is None:
            failures.append(f"corpus {name}: tree not found (run `beryl corpus fetch {c['debian_source_package']}` or pass --fetch)")
        elif roots[name].name != c["top_dir"] and name not in overrides:
            failures.append(f"corpus {name}: fetched tree {roots[name]} does not end in top_dir {c['top_dir']!r}")
    lines_cache = {}
    n_ok = collections.Counter()
    for kind, items in (("entry", truth["entries"]), ("decoy", truth["decoys"])):
        for x in items:
            root = roots.get(x.get("project"))
            if root is None:
                continue
            ok, how, msg = check_item(x, root, lines_cache)
            if ok:
                n_ok[(kind, how)] += 1
            else:
                failures.append(f"{kind} {x['project']}:{x['path']}:{x['start_line']}-{x['end_line']} {x['algorithm']} {x['function']}: {msg}")

    # Summary.
    entries = truth["entries"]
    lang = {n: c["language"] for n, c in corpora.items()}
    if not quiet:
        print(f"truth: {truth_path}")
        print(f"{len(corpora)} corpora, {len(entries)} entries, {len(truth['decoys'])} decoys, "
              f"{len({e['algorithm'] for e in entries})} algorithms")
        by_proj = collections.Counter(e["project"] for e in entries)
        print("entries per project:")
        for n in corpora:
            algs = len({e["algorithm"] for e in entries if e["project"] == n})
            print(f"  {n:24} {lang[n]:5} {by_proj[n]:4} entries, {algs:3} algorithms")
        by_lang = collections.Counter(lang[e["project"]] for e in entries)
        print("entries per language: " + ", ".join(f"{k} {v}" for k, v in sorted(by_lang.items())))
        by_conf = collections.Counter(e["confidence"] for e in entries)
        print("confidence: " + ", ".join(f"{k} {v}" for k, v in sorted(by_conf.items())))
        print("entries per algorithm (projects):")
        by_alg = collections.defaultdict(list)
        for e in entries:
            by_alg[e["algorithm"]].append(e["project"])
        for a in sorted(by_alg):
            projs = sorted(set(by_alg[a]))
            print(f"  {a:38} {len(by_alg[a]):3}  ({', '.join(projs)})")
        missing = sorted(queries - set(by_alg))
        print(f"query algorithms without entries ({len(missing)}): {', '.join(missing)}")
        print(f"checked: {n_ok[('entry', 'head')]} entries by head, {n_ok[('entry', 'part')]} as part of an enclosing function; "
              f"{n_ok[('decoy', 'head')] + n_ok[('decoy', 'part')]} decoys")
    if failures:
        print(f"\nFAILED ({len(failures)}):")
        for f in failures:
            print("  " + f)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
