"""A real MCP client (the official Python SDK) against `beryl mcp`.

    mcp-client.py check BERYL INDEX PSEUDOCODE_FILE
        initialize, list tools, search_pseudocode (Floyd-Warshall must rank first),
        search_text, show, status, bad calls (each a tool error), then a good call again
        whose answer must equal the first; prints one line per step and exits non-zero on
        the first failure.
    mcp-client.py bench BERYL INDEX PSEUDOCODE_FILE [N]
        latency of N warm search_pseudocode and search_text calls through stdio (p50,
        p95; the first call reported apart) and the server's memory before and after.
"""

import asyncio
import json
import os
import shutil
import subprocess
import statistics
import tempfile
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def server(beryl, index, *extra):
    env = dict(os.environ)
    env.setdefault("RUST_LOG", "warn")
    return StdioServerParameters(command=beryl, args=["mcp", "--index", index, *extra], env=env)


def structured(result):
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def text(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def expect_tool_error(result, kind, what, contains=None):
    if not result.is_error:
        fail(f"{what}: expected a tool error, got {text(result)[:200]}")
    got = structured(result)
    if got.get("error") != kind:
        fail(f"{what}: expected error kind {kind!r}, got {got}")
    if contains and contains not in got["message"]:
        fail(f"{what}: the message lacks {contains!r}: {got['message']}")
    print(f"ok   {what}: tool error ({kind}): {got['message'].splitlines()[0][:120]}", flush=True)


async def check(beryl, index, query_file):
    query = open(query_file, encoding="utf-8").read()
    # The `index` tool builds only under folders the user allowed.
    scratch = tempfile.mkdtemp(prefix="beryl-mcp-")
    async with stdio_client(server(beryl, index, "--allow-index", scratch)) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            print(f"ok   initialize: {init.server_info.name} {init.server_info.version}, protocol {init.protocol_version}", flush=True)
            tools = {t.name: t for t in (await s.list_tools()).tools}
            want = {"search_pseudocode", "search_text", "show", "status", "index"}
            if not want <= set(tools):
                fail(f"tools {sorted(tools)} lack {sorted(want - set(tools))}")
            props = tools["search_pseudocode"].input_schema.get("properties", {})
            if not {"query", "top", "method", "index"} <= set(props):
                fail(f"search_pseudocode arguments {sorted(props)}")
            print(f"ok   list_tools: {sorted(tools)}", flush=True)

            first = await s.call_tool("search_pseudocode", {"query": query, "top": 5})
            if first.is_error:
                fail(f"search_pseudocode: {text(first)}")
            r = structured(first)
            top = r["fragments"][0]["spans"][0]
            if "floyd" not in top["function"].lower() or "floyd" not in top["path"].lower():
                fail(f"Floyd-Warshall not first: {top}")
            if not r["fragments"][0]["matches"] or not r["fragments"][0]["reasons"]:
                fail("the first result has no matched lines or reasons")
            print(f"ok   search_pseudocode: #1 {top['function']} {top['path']}:{top['lines']}", flush=True)

            t = await s.call_tool("search_text", {"query": "all-pairs shortest path lengths (Floyd-Warshall)", "top": 5})
            if t.is_error:
                fail(f"search_text: {text(t)}")
            names = [f["spans"][0]["function"] for f in structured(t)["fragments"]]
            if not any("floyd" in n.lower() for n in names):
                fail(f"search_text found no Floyd-Warshall in {names}")
            print(f"ok   search_text: {names[:3]}", flush=True)

            # A scope is applied before ranking: all `top` results lie inside it.
            sc = await s.call_tool("search_pseudocode", {"query": query, "top": 3, "path": ["!*floyd*"], "lang": ["c"]})
            if sc.is_error:
                fail(f"scoped search: {text(sc)}")
            paths = [sp["path"] for f in structured(sc)["fragments"] for sp in f["spans"]]
            if len(structured(sc)["fragments"]) != 3 or any("floyd" in p.lower() for p in paths):
                fail(f"scoped search returned {paths}")
            print(f"ok   scoped search: {len(paths)} spans, none in a floyd file", flush=True)
            expect_tool_error(await s.call_tool("search_text", {"query": "sort", "lang": ["cobol"]}), "arguments", "unknown language")
            expect_tool_error(await s.call_tool("search_text", {"query": "sort", "lang": ["java"]}), "arguments", "empty scope", contains="no indexed file")

            # `show` marks the query lines the search matched at that result.
            first = await s.call_tool("search_pseudocode", {"query": query, "top": 5})
            top = structured(first)["fragments"][0]["spans"][0]
            shown = await s.call_tool("show", {"path": top["path"], "lines": f"{top['lines'][0]}-{top['lines'][1]}"})
            if shown.is_error:
                fail(f"show: {text(shown)}")
            marked = [row for row in structured(shown)["code"] if row["query_lines"]]
            if not marked:
                fail("show marked no line with a query line")
            print(f"ok   show: {len(structured(shown)['code'])} lines, {len(marked)} marked", flush=True)

            st = await s.call_tool("status", {})
            if st.is_error or not structured(st)["indexes"]:
                fail(f"status: {text(st)}")
            ix = structured(st)["indexes"][0]
            print(f"ok   status: {ix['files']} files, {ix['functions']} functions, changed since {ix['changed_since']}", flush=True)

            expect_tool_error(await s.call_tool("search_pseudocode", {"query": "   "}), "query", "empty query")
            expect_tool_error(await s.call_tool("search_pseudocode", {"query": "FOO(A)\n    $x = 1\n    for $i = 1$ to $n$\n"}), "query", "bad p-code", contains=":2:5:")
            expect_tool_error(await s.call_tool("search_pseudocode", {"query": query, "top": 100000}), "arguments", "huge top")
            expect_tool_error(await s.call_tool("search_text", {"query": "sort", "index": "/nonexistent"}), "no_index", "no such index")
            expect_tool_error(await s.call_tool("show", {"path": "/etc/passwd"}), "path", "a file no index records")
            expect_tool_error(await s.call_tool("index", {"path": "/"}), "path", "index outside the allowed folders", contains="--allow-index")
            expect_tool_error(await s.call_tool("search_text", {"query": "sort", "top": "five"}), "arguments", "arguments of the wrong type")
            expect_tool_error(await s.call_tool("show", {"path": top["path"], "lines": "nine"}), "arguments", "bad lines")

            # Build a second index with the `index` tool, following its progress.
            root = ix["roots"][0]
            src = os.path.join(scratch, "src")
            os.makedirs(src)
            copied = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".c"))[:3]
            for f in copied:
                shutil.copy(f, src)
            notes = []

            async def progress(done, total, message):
                notes.append((done, total, message))

            built = await s.call_tool("index", {"path": src, "index": os.path.join(scratch, "idx")}, progress_callback=progress)
            if built.is_error:
                fail(f"index: {text(built)}")
            if not notes:
                fail("index sent no progress notification")
            st = structured(await s.call_tool("status", {}))
            if len(st["indexes"]) != 2:
                fail(f"status after index: {st}")
            hits = await s.call_tool("search_text", {"query": "shortest paths", "index": src})
            if hits.is_error:
                fail(f"search_text on the new index: {text(hits)}")
            print(f"ok   index: {text(built)}; {len(notes)} progress notifications, e.g. {notes[-1]}", flush=True)

            # An update by another process (`beryl index`, as `beryl watch` runs it) is seen
            # by the server's next search, without a restart.
            with open(copied and os.path.join(src, os.path.basename(copied[0])), "a") as f:
                f.write("\nint beryl_mcp_probe_gcd(int a, int b) { while (b != 0) { int t = a % b; a = b; b = t; } return a; }\n")
            subprocess.run([beryl, "index", src, "--index", os.path.join(scratch, "idx")], check=True, capture_output=True)
            hits = await s.call_tool("search_text", {"query": "greatest common divisor of two integers", "index": src, "top": 20})
            if hits.is_error or "beryl_mcp_probe_gcd" not in text(hits):
                fail(f"the server did not see an update made outside it: {text(hits)[:300]}")
            print("ok   an update by another process is seen by the next search", flush=True)
            expect_tool_error(await s.call_tool("search_text", {"query": "sort"}), "no_index", "no index named while two are open")

            again = await s.call_tool("search_pseudocode", {"query": query, "top": 5, "index": index})
            if again.is_error:
                fail(f"search after bad calls: {text(again)}")
            a, b = structured(first), structured(again)
            for x in (a, b):
                x.pop("timings", None)
            if a != b:
                fail("the answer after bad calls differs from the answer before")
            print("ok   a good call after the bad ones answers as before", flush=True)

    # A damaged index: the server starts, and calls that reach it are tool errors.
    damaged = tempfile.mkdtemp(prefix="beryl-mcp-damaged-")
    shutil.copytree(index, damaged, dirs_exist_ok=True, symlinks=True)
    gen = os.path.join(damaged, os.readlink(os.path.join(damaged, "current")))
    with open(os.path.join(gen, "meta.json"), "w") as f:
        f.write("{ not json")
    async with stdio_client(server(beryl, damaged)) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            expect_tool_error(await s.call_tool("search_pseudocode", {"query": query}), "index", "damaged index")
            st = await s.call_tool("status", {})
            if st.is_error or not structured(st)["broken"]:
                fail(f"status does not report the damaged index: {text(st)}")
            print("ok   status names the damaged index", flush=True)
    shutil.rmtree(damaged, ignore_errors=True)
    shutil.rmtree(scratch, ignore_errors=True)
    print("mcp client check: all passed", flush=True)


def rss_kb(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None


def server_pid(beryl):
    me = os.getpid()
    best = None
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            status = open(f"/proc/{p}/status").read()
            cmd = open(f"/proc/{p}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        ppid = int(next(l.split()[1] for l in status.splitlines() if l.startswith("PPid:")))
        if ppid == me and cmd and cmd[0].decode(errors="replace") == beryl:
            best = int(p)
    return best


async def bench(beryl, index, query_file, n):
    query = open(query_file, encoding="utf-8").read()
    async with stdio_client(server(beryl, index)) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            pid = server_pid(beryl)
            t = time.perf_counter()
            await s.call_tool("search_pseudocode", {"query": query, "top": 10})
            first = (time.perf_counter() - t) * 1000
            await s.call_tool("search_text", {"query": "shortest paths between all pairs", "top": 10})
            rss0 = rss_kb(pid) if pid else None
            lat = {"search_pseudocode": [], "search_text": []}
            texts = ["all-pairs shortest paths", "sort an array in place", "breadth-first search of a graph", "greatest common divisor", "matrix LU decomposition"]
            for i in range(n):
                t = time.perf_counter()
                r = await s.call_tool("search_pseudocode", {"query": query, "top": 10})
                lat["search_pseudocode"].append((time.perf_counter() - t) * 1000)
                if r.is_error:
                    fail(text(r))
                t = time.perf_counter()
                r = await s.call_tool("search_text", {"query": texts[i % len(texts)], "top": 10})
                lat["search_text"].append((time.perf_counter() - t) * 1000)
            rss1 = rss_kb(pid) if pid else None
    print(f"index {index}, {n} calls of each tool through stdio")
    print(f"first search_pseudocode after start: {first:.1f} ms")
    for k, v in lat.items():
        v = sorted(v)
        print(f"{k:18} p50 {statistics.median(v):7.1f} ms  p95 {v[int(0.95 * (len(v) - 1))]:7.1f} ms  min {v[0]:7.1f} ms")
    if rss0 and rss1:
        print(f"server memory (RSS): {rss0 / 1024:.0f} MiB after the first calls, {rss1 / 1024:.0f} MiB after {2 * n} more ({(rss1 - rss0) / 1024:+.1f} MiB)")


if __name__ == "__main__":
    if len(sys.argv) < 5 or sys.argv[1] not in ("check", "bench"):
        print(__doc__)
        sys.exit(2)
    mode, beryl, index, query_file = sys.argv[1:5]
    if mode == "check":
        asyncio.run(check(beryl, index, query_file))
    else:
        asyncio.run(bench(beryl, index, query_file, int(sys.argv[5]) if len(sys.argv) > 5 else 100))
