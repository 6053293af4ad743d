"""Serves a sharded beryl corpus on Ray Serve.

One deployment per shard keeps its index open: each replica runs `beryl cluster shard
--listen`, which speaks JSON lines on a local TCP port. One coordinator deployment (the
HTTP ingress, POST /search) runs `beryl cluster coordinate`, which converts and encodes
the query once and merges the shards' answers; this file carries its requests to the
shards (Serve names a live replica of each, then the coordinator speaks to it directly),
with a per-shard timeout, another replica when one fails, and the shards that did not
answer named in the result.

    python serve.py --address 127.0.0.1:6380 --global G --shard S0 --shard S1 [--replicas 2]

Then: beryl search --cluster http://127.0.0.1:8000/search --pseudo QUERY
"""

import argparse
import asyncio
import json
import os
import subprocess
import time

import ray
from ray import serve
from starlette.requests import Request
from starlette.responses import Response


def rss_mb(pid):
    """Resident memory of a process, in MiB (None when gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class Pipe:
    """A beryl process spoken to one line at a time; lines pass through unparsed."""

    def __init__(self, argv):
        self.argv = argv
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.lock = asyncio.Lock()

    def _write(self, lines):
        self.proc.stdin.write("".join(l + "\n" for l in lines))
        self.proc.stdin.flush()

    def _read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"beryl (pid {self.proc.pid}) ended with status {self.proc.poll()}")
        return line.rstrip("\n")

    async def write(self, *lines):
        await asyncio.get_running_loop().run_in_executor(None, self._write, lines)

    async def read(self):
        return await asyncio.get_running_loop().run_in_executor(None, self._read)

    def alive(self):
        return self.proc.poll() is None


def error_reply(message):
    return json.dumps({"reply": "error", "message": message})


@serve.deployment(ray_actor_options={"num_cpus": 0}, health_check_period_s=1, health_check_timeout_s=5)
class Shard:
    """A shard replica: a beryl process with the shard's index open, listening on a local
    port; the coordinator asks it for that address and then speaks to it directly."""

    def __init__(self, beryl, global_dir, index):
        self.index = index
        # On the node's own address, which the coordinator (maybe on another node) can
        # reach; it ends when its standard input closes, that is, with this replica.
        host = ray.util.get_node_ip_address()
        self.proc = subprocess.Popen([beryl, "cluster", "shard", "--global", global_dir, "--index", index, "--listen", f"{host}:0", "--exit-with-stdin"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        first = self.proc.stdout.readline()
        if not first:
            raise RuntimeError(f"the shard server for {index} did not start")
        self.addr = json.loads(first)["listening"]

    def address(self):
        if self.proc.poll() is not None:
            raise RuntimeError("the shard's beryl process ended")
        return self.addr

    def stats(self):
        return {"index": self.index, "replica_pid": os.getpid(), "beryl_pid": self.proc.pid, "beryl_rss_mb": rss_mb(self.proc.pid), "address": self.addr}

    def check_health(self):
        if self.proc.poll() is not None:
            raise RuntimeError("the shard's beryl process ended")


@serve.deployment(ray_actor_options={"num_cpus": 0})
class Coordinator:
    def __init__(self, beryl, global_dir, shards, timeout):
        self.argv = [beryl, "cluster", "coordinate", "--global", global_dir, "--shards", str(len(shards))]
        self.shards = shards
        self.timeout = timeout
        self.pipe = None
        self.ready = {}
        self.conns = {}
        self.lock = asyncio.Lock()

    async def _connect(self, s):
        addr = await self.shards[s].address.remote()
        host, port = addr.rsplit(":", 1)
        self.conns[s] = await asyncio.open_connection(host, int(port), limit=1 << 26)
        return self.conns[s]

    def _drop(self, s):
        conn = self.conns.pop(s, None)
        if conn:
            conn[1].close()

    async def _ask_one(self, s, request):
        """One shard's reply: from any replica, within the timeout, else an error reply.
        A replica that fails is left for another (Serve routes the address request to a
        live one); one that does not answer in time is given up for this query."""
        deadline = time.monotonic() + self.timeout
        last = "no answer"
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return error_reply(f"shard {s}: no answer within {self.timeout} s ({last})")
            try:
                reader, writer = self.conns.get(s) or await asyncio.wait_for(self._connect(s), timeout=left)
                writer.write(request.encode() + b"\n")
                await writer.drain()
                line = await asyncio.wait_for(reader.readline(), timeout=max(deadline - time.monotonic(), 0.001))
                if not line:
                    raise ConnectionError("the shard closed the connection")
                return line.decode().rstrip("\n")
            except asyncio.TimeoutError:
                # A reply may still come on this connection: it is not used again.
                self._drop(s)
                return error_reply(f"shard {s}: no answer within {self.timeout} s")
            except asyncio.CancelledError:
                self._drop(s)
                raise
            except Exception as e:  # noqa: BLE001
                self._drop(s)
                last = f"{type(e).__name__}: {str(e)[:200]}"
                await asyncio.sleep(0.05)

    async def _until_answer(self, rounds=None):
        """Carries the coordinator's fan-outs until it answers; returns the answer line.
        `rounds` gets the milliseconds of each fan-out."""
        while True:
            # Each step waits at most a timeout per shard; the coordinator's own work is short.
            line = await asyncio.wait_for(self.pipe.read(), timeout=self.timeout + 60)
            if not line.startswith('{"ask":'):
                return line
            t = time.monotonic()
            shards = json.loads(line)["ask"]
            requests = [await self.pipe.read() for _ in shards]
            replies = await asyncio.gather(*(self._ask_one(s, r) for s, r in zip(shards, requests)))
            await self.pipe.write(*replies)
            if rounds is not None:
                rounds.append(round((time.monotonic() - t) * 1000, 1))

    async def _start(self):
        self.pipe = Pipe(self.argv)
        msg = json.loads(await self._until_answer())
        if "ready" not in msg:
            raise RuntimeError(f"the coordinator did not start: {msg}")
        self.ready = msg["ready"]

    def _reset(self):
        """After an exchange broke off (the client left, a timeout): a fresh coordinator
        process and fresh connections, as either may hold half a conversation."""
        if self.pipe is not None and self.pipe.alive():
            self.pipe.proc.kill()
        self.pipe = None
        for s in list(self.conns):
            self._drop(s)

    async def __call__(self, http: Request):
        try:
            body = json.loads(await http.body())
        except ValueError as e:
            return Response(json.dumps({"error": f"the request is not JSON: {e}"}), status_code=400, media_type="application/json")
        async with self.lock:
            try:
                return await self._exchange(body)
            except BaseException:
                self._reset()
                raise

    async def _exchange(self, body):
        if self.pipe is None or not self.pipe.alive():
            await self._start()
        if body.get("stats"):
            shards = await asyncio.gather(*(h.stats.remote() for h in self.shards))
            stats = {"coordinator": {"beryl_pid": self.pipe.proc.pid, "beryl_rss_mb": rss_mb(self.pipe.proc.pid), **self.ready}, "shards": shards}
            return Response(json.dumps(stats), media_type="application/json")
        t = time.monotonic()
        rounds = []
        await self.pipe.write(json.dumps({"search": body}))
        answer = await self._until_answer(rounds)
        total = round((time.monotonic() - t) * 1000, 1)
        return Response(answer, media_type="application/json", headers={"X-Beryl-Fanout-Ms": ",".join(map(str, rounds)), "X-Beryl-Coordinator-Ms": str(total)})

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--address", required=True)
    ap.add_argument("--global", dest="global_dir", required=True)
    ap.add_argument("--shard", action="append", required=True, help="a shard index directory (repeat)")
    ap.add_argument("--beryl", default=os.environ.get("BERYL", "beryl"))
    ap.add_argument("--replicas", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds a shard may take per step")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    a = ap.parse_args()
    beryl = os.path.abspath(a.beryl) if os.sep in a.beryl else a.beryl
    ray.init(address=a.address, logging_level="ERROR")
    serve.start(http_options={"host": a.host, "port": a.port})
    shards = [
        Shard.options(name=f"shard-{i}", num_replicas=a.replicas).bind(beryl, os.path.abspath(a.global_dir), os.path.abspath(d))
        for i, d in enumerate(a.shard)
    ]
    app = Coordinator.bind(beryl, os.path.abspath(a.global_dir), shards, a.timeout)
    serve.run(app, name="beryl", route_prefix="/search")
    print(f"serving {len(a.shard)} shards x {a.replicas} replicas at http://{a.host}:{a.port}/search", flush=True)


if __name__ == "__main__":
    main()
