#!/usr/bin/env python3
"""Trains beryl's code-search adapters: LoRA on all-MiniLM-L6-v2 for (description, code) search.

  prepare   pairs (JSON lines from `beryl mine-pairs`) -> a bundle of token ids (xz)
  train     bundle + base model -> a run folder: checkpoints, best adapters, dev curve, report
  reference base model + adapters -> reference.json (vectors of fixed texts, f32, for the
            Rust parity test)
  ship      a run's best adapters (f16), reference vectors and a manifest -> a model folder
  pack      bundle, base model (f16 matrices with --half) and start adapters -> folders of at
            most --limit-mb each, for a GPU machine that takes a bounded input per call
  unpack    one such folder -> the staging folder there; the files are rebuilt and checked
            once every folder has arrived

The recipe, each part switchable to measure it:
  - contrastive loss over in-batch negatives plus one hard negative per pair, mined once with
    the frozen current encoder (`--init`): the function of the same package whose code the
    current encoder finds closest to the pair's description, unless their descriptions are
    near-identical (then it is probably no negative at all);
  - code shown as written, or as its twin with neutral or random names (beryl's anonymizer);
  - a twin term: a twin's vector is pulled towards the frozen current encoder's vector of the
    original code (self-distillation), so renaming moves a function's vector little;
  - queries that do not name the function: the description without the identifiers that the
    anonymizer renamed in the code;
  - gradient caching (`--chunk`): vectors of the whole batch first without gradients, the loss
    and its gradient with respect to those vectors, then each chunk again with gradients; the
    batch size is then not bounded by memory;
  - bf16 matrix products on a GPU and on CPUs with native bf16 (AVX512-BF16).

Runs are exact functions of (bundle, base, init, arguments): the data order and every random
choice derive from (seed, epoch, step), dropout is off, and a checkpoint (adapters, optimizer,
schedule, step, curve) is written atomically every few minutes; `train` on a run folder with a
checkpoint goes on from it. On a CPU it reaches the same weights, to the bit, as a run never
interrupted (`tests/train_encoder.rs`); on a GPU, kernels that do not add in a fixed order
make any two runs differ in the last bits, interrupted or not. `--minutes` fits the number
of steps to a measured speed, so runs with it are not reproducible; `--steps` is.
"""
import argparse, hashlib, io, json, lzma, math, os, random, re, shutil, sys, time

import numpy as np

TARGETS = ("attention.self.query", "attention.self.key", "attention.self.value",
           "attention.output.dense", "intermediate.dense", "output.dense")
KINDS = ("doc", "docnf", "code", "neutral", "random")
CLS, SEP = 101, 102
REFERENCE_TEXTS = [
    "compute all-pairs shortest path distances with the Floyd-Warshall algorithm",
    "Returns the greatest common divisor of two integers.",
    "sort the array in place by insertion",
    "for (k = 0; k < n; k++) for (i = 0; i < n; i++) for (j = 0; j < n; j++) if (d[i][k] + d[k][j] < d[i][j]) d[i][j] = d[i][k] + d[k][j];",
    "int func_1(int var_0, int var_1) { while (var_1 != 0) { int var_2 = var_0 % var_1; var_0 = var_1; var_1 = var_2; } return var_0; }",
    "public static int binarySearch(int[] a, int key) { int lo = 0, hi = a.length - 1; while (lo <= hi) { int mid = (lo + hi) >>> 1; if (a[mid] < key) lo = mid + 1; else if (a[mid] > key) hi = mid - 1; else return mid; } return -(lo + 1); }",
    "heap",
    "x",
]
KEYWORDS = set("""auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef union unsigned
void volatile while bool class namespace template typename public private protected virtual override
final new delete this throw try catch using operator friend explicit mutable constexpr nullptr true
false abstract boolean byte extends implements import instanceof interface package super synchronized
throws transient var null""".split())
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- prepare

def renamed_identifiers(code, neutral):
    """Identifiers of `code` that the anonymizer renamed (absent from the neutral twin)."""
    if not neutral:
        return set()
    kept = set(IDENT.findall(neutral))
    return {w for w in IDENT.findall(code) if w not in kept and w not in KEYWORDS}


def function_name(code):
    for m in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", code):
        if m.group(1) not in KEYWORDS:
            return m.group(1)
    return None


def looks_like_code(word):
    """`list_add`, `getState`, `utf8`: not an English word. A name such as `close` or `log`
    reads as the verb it is, and stays in the description."""
    return "_" in word or any(c.isdigit() for c in word) or any(c.isupper() for c in word[1:])


def name_free(doc, code, neutral):
    """The description without the function's own identifiers (its name, its parameters',
    the fields it touches) where they read as code, not as English words."""
    ids = renamed_identifiers(code, neutral)
    name = function_name(code)
    low = {w.lower() for w in ids if len(w) >= 2 and looks_like_code(w)}
    if name and looks_like_code(name):
        low.add(name.lower())
    out = []
    for w in doc.split():
        core = w.strip(".,;:!?`'\"()[]{}<>#*").removesuffix("()")
        core = core.split("::")[-1].split(".")[-1] if ("::" in core or "." in core[1:-1]) else core
        if core.lower() in low:
            continue
        out.append(w)
    text = " ".join(out)
    return text if len(text.split()) >= 3 else doc


def norm_ws(s):
    return " ".join(s.split())


def pack(rows):
    off = np.zeros(len(rows) + 1, dtype=np.uint32)
    off[1:] = np.cumsum([len(r) for r in rows])
    flat = np.fromiter((t for r in rows for t in r), dtype=np.uint16, count=int(off[-1]))
    return flat, off


def cmd_prepare(a):
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(a.base, "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    pairs = [json.loads(l) for l in open(a.pairs)]
    pairs.sort(key=lambda p: (p["source"], p.get("file", ""), p.get("lines", [0, 0])[0]))
    packages = sorted({p["source"] for p in pairs})
    pidx = {p: i for i, p in enumerate(packages)}
    texts = {k: [] for k in KINDS}
    changed = 0
    for p in pairs:
        code = norm_ws(p["code"])
        neutral = norm_ws(p.get("code_anon") or "") or code
        rand = norm_ws(p.get("code_rand") or "") or code
        nf = name_free(p["doc"], p["code"], p.get("code_anon") or "")
        changed += nf != p["doc"]
        for k, t in zip(KINDS, (p["doc"], nf, code, neutral, rand)):
            texts[k].append(t)
    arrays = {}
    for k in KINDS:
        limit = a.doc_tokens if k.startswith("doc") else a.max_len - 2
        ids = [e.ids[:limit] for e in tok.encode_batch(texts[k], add_special_tokens=False)]
        arrays[f"tok_{k}"], arrays[f"off_{k}"] = pack(ids)
    arrays["package"] = np.array([pidx[p["source"]] for p in pairs], dtype=np.uint32)
    arrays["dev"] = np.array([p.get("split") == "dev" for p in pairs], dtype=np.uint8)
    arrays["hash"] = np.array([int(p.get("hash") or "0", 16) for p in pairs], dtype=np.uint64)
    meta = {
        "pairs": len(pairs), "packages": packages, "dev_pairs": int(arrays["dev"].sum()),
        "max_len": a.max_len, "doc_tokens": a.doc_tokens, "name_free_changed": changed,
        "tokenizer_sha256": sha256_of(os.path.join(a.base, "tokenizer.json")),
        "pairs_sha256": sha256_of(a.pairs),
    }
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    data = lzma.compress(buf.getvalue(), preset=9)
    with open(a.out, "wb") as f:
        f.write(data)
    log(f"{a.out}: {len(pairs)} pairs ({meta['dev_pairs']} dev) from {len(packages)} packages, "
        f"{changed} descriptions made name-free, {len(data) / 1e6:.1f} MB")


def load_bundle(path):
    z = np.load(io.BytesIO(lzma.decompress(open(path, "rb").read())))
    arrays = {k: z[k] for k in z.files}
    meta = json.loads(bytes(arrays.pop("meta")).decode())
    return arrays, meta


# ---------------------------------------------------------------- model

def build_model(torch):
    nn, F = torch.nn, torch.nn.functional

    class LoRALinear(nn.Module):
        def __init__(self, w, b):
            super().__init__()
            self.register_buffer("w", w)
            self.register_buffer("b", b)
            self.A = self.B = None
            self.scale = 0.0

        def add_lora(self, r, alpha, gen):
            out_f, in_f = self.w.shape
            self.A = nn.Parameter(torch.randn(r, in_f, generator=gen) / math.sqrt(in_f))
            self.B = nn.Parameter(torch.zeros(out_f, r))
            self.scale = alpha / r

        def forward(self, x):
            y = F.linear(x, self.w, self.b)
            if self.A is not None:
                y = y + F.linear(F.linear(x, self.A), self.B) * self.scale
            return y

    class Bert(nn.Module):
        """BERT as all-MiniLM-L6-v2 uses it (post-LN, exact GELU, mean pooling)."""

        def __init__(self, sd, cfg):
            super().__init__()
            g = lambda k: sd[k].float()
            self.heads = cfg["num_attention_heads"]
            self.eps = cfg["layer_norm_eps"]
            for k in ("word_embeddings", "position_embeddings", "token_type_embeddings"):
                self.register_buffer(k, g(f"embeddings.{k}.weight"))
            self.register_buffer("ln_w", g("embeddings.LayerNorm.weight"))
            self.register_buffer("ln_b", g("embeddings.LayerNorm.bias"))
            self.lin = nn.ModuleDict()
            self.norms = {}
            for i in range(cfg["num_hidden_layers"]):
                for t in TARGETS:
                    n = f"encoder.layer.{i}.{t}"
                    self.lin[n.replace(".", "_")] = LoRALinear(g(n + ".weight"), g(n + ".bias"))
                for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
                    n = f"encoder.layer.{i}.{ln}"
                    w, b = n.replace(".", "_") + "_w", n.replace(".", "_") + "_b"
                    self.register_buffer(w, g(n + ".weight"))
                    self.register_buffer(b, g(n + ".bias"))
                    self.norms[n] = (w, b)
            self.layers = cfg["num_hidden_layers"]

        def linear(self, name):
            return self.lin[name.replace(".", "_")]

        def ln(self, name, x):
            w, b = self.norms[name]
            return F.layer_norm(x, x.shape[-1:], getattr(self, w), getattr(self, b), self.eps)

        def forward(self, ids, mask):
            n, L = ids.shape
            x = self.word_embeddings[ids] + self.position_embeddings[:L].unsqueeze(0) + self.token_type_embeddings[0]
            x = F.layer_norm(x, x.shape[-1:], self.ln_w, self.ln_b, self.eps)
            am = mask.bool()[:, None, None, :]
            for i in range(self.layers):
                p = f"encoder.layer.{i}."
                q, k, v = (self.linear(p + t)(x).view(n, L, self.heads, -1).transpose(1, 2) for t in TARGETS[:3])
                ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=am).transpose(1, 2).reshape(n, L, -1)
                x = self.ln(p + "attention.output.LayerNorm", x + self.linear(p + "attention.output.dense")(ctx))
                h = F.gelu(self.linear(p + "intermediate.dense")(x))
                x = self.ln(p + "output.LayerNorm", x + self.linear(p + "output.dense")(h))
            m = mask.unsqueeze(-1).to(x.dtype)
            v = (x * m).sum(1) / m.sum(1).clamp(min=1e-9)
            return F.normalize(v.float(), dim=-1)

    return Bert


def lora_names(model):
    """safetensors names (`encoder.layer.0.attention.self.query`) of the LoRA linears."""
    out = {}
    for i in range(model.layers):
        for t in TARGETS:
            out[f"encoder.layer.{i}.{t}"] = model.linear(f"encoder.layer.{i}.{t}")
    return out


def load_base(torch, base, device):
    from safetensors.torch import load_file
    sd = load_file(os.path.join(base, "model.safetensors"))
    cfg = json.load(open(os.path.join(base, "config.json")))
    return build_model(torch)(sd, cfg).to(device)


def apply_adapter(torch, model, path, trainable=False, rank=None, alpha=None, gen=None):
    """Adds LoRA to every target linear: from `path` when given (values as stored, f16 as f16
    rounds them), else fresh (A random, B zero)."""
    from safetensors import safe_open
    tensors, meta = {}, {}
    if path:
        with safe_open(path, "pt") as f:
            meta = f.metadata() or {}
            for k in f.keys():
                tensors[k] = f.get_tensor(k).float()
        rank, alpha = int(meta["rank"]), float(meta["alpha"])
    for name, lin in lora_names(model).items():
        lin.add_lora(rank, alpha, gen)
        if path:
            lin.A.data.copy_(tensors[name + ".lora_A"])
            lin.B.data.copy_(tensors[name + ".lora_B"])
        lin.A.requires_grad_(trainable)
        lin.B.requires_grad_(trainable)
    return rank, alpha


def save_adapter(model, path, rank, alpha, dtype):
    import torch
    from safetensors.torch import save_file
    t = {}
    for name, lin in lora_names(model).items():
        t[name + ".lora_A"] = lin.A.detach().to("cpu", dtype).contiguous()
        t[name + ".lora_B"] = lin.B.detach().to("cpu", dtype).contiguous()
    tmp = path + ".tmp"
    save_file(t, tmp, metadata={"rank": str(rank), "alpha": str(alpha)})
    os.replace(tmp, path)


# ---------------------------------------------------------------- batches and encoding

class Data:
    def __init__(self, arrays):
        self.a = arrays

    def ids(self, kind, i):
        off = self.a[f"off_{kind}"]
        return self.a[f"tok_{kind}"][off[i]:off[i + 1]]


def encode_ids(torch, model, seqs, device, chunk, grad, bf16):
    """Vectors of token-id sequences, shortest first in chunks of at most `chunk` sequences
    (each padded to its own longest), returned in input order."""
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    out = [None] * len(seqs)
    for s in range(0, len(order), chunk):
        part = order[s:s + chunk]
        L = max(len(seqs[i]) for i in part) + 2
        ids = np.zeros((len(part), L), dtype=np.int64)
        mask = np.zeros((len(part), L), dtype=np.int64)
        for r, i in enumerate(part):
            t = seqs[i]
            ids[r, 0] = CLS
            ids[r, 1:1 + len(t)] = t
            ids[r, 1 + len(t)] = SEP
            mask[r, :len(t) + 2] = 1
        with torch.set_grad_enabled(grad), torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            v = model(torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device))
        for r, i in enumerate(part):
            out[i] = v[r]
    return torch.stack(out)


def texts_to_ids(tok, texts, max_len):
    return [np.array(e.ids[:max_len - 2], dtype=np.uint16) for e in tok.encode_batch(texts, add_special_tokens=False)]


def mrr(torch, q, c):
    s = q @ c.t()
    gold = s.diag().unsqueeze(1)
    ranks = (s > gold).sum(1) + 1
    return (1.0 / ranks.float()).mean().item()


# ---------------------------------------------------------------- train

def pick_device(torch, want):
    if want == "auto":
        want = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(want)


def native_bf16(device):
    if device.type == "cuda":
        return True
    try:
        return "avx512_bf16" in open("/proc/cpuinfo").read()
    except OSError:
        return False


def args_of(a):
    return {k: v for k, v in vars(a).items() if k != "fn"}


def step_rng(seed, *keys):
    return np.random.default_rng([seed, *keys])


def cmd_train(a):
    import torch
    F = torch.nn.functional
    torch.use_deterministic_algorithms(a.deterministic, warn_only=True)
    if a.mining_block < 1:
        sys.exit(f"--mining-block must be at least 1, not {a.mining_block}")
    if a.threads:
        torch.set_num_threads(a.threads)
    device = pick_device(torch, a.device)
    bf16 = {"auto": native_bf16(device), "on": True, "off": False}[a.bf16]
    arrays, meta = load_bundle(a.bundle)
    data = Data(arrays)
    dev_mask = arrays["dev"].astype(bool)
    train_idx = np.flatnonzero(~dev_mask)
    if len(train_idx) == 0:
        sys.exit(f"{a.bundle}: no training pairs (every pair is in the dev split)")
    dev_idx = np.flatnonzero(dev_mask)
    if a.limit_dev and len(dev_idx) > a.limit_dev:
        dev_idx = dev_idx[step_rng(a.seed, 7).permutation(len(dev_idx))[:a.limit_dev]]
        dev_idx.sort()
    os.makedirs(a.run, exist_ok=True)
    ckpt_path = os.path.join(a.run, "checkpoint.pt")
    identity = {"bundle": sha256_of(a.bundle), "init": sha256_of(a.init) if a.init else None,
                "base": sha256_of(os.path.join(a.base, "model.safetensors")), "bf16": bf16}
    t_start = time.time()

    torch.manual_seed(a.seed)
    gen = torch.Generator().manual_seed(a.seed)
    model = load_base(torch, a.base, device)
    for p in model.parameters():
        p.requires_grad_(False)
    teacher = None
    if a.init:
        teacher = load_base(torch, a.base, device)
        apply_adapter(torch, teacher, a.init)
        teacher.to(device).eval()
    # The student starts from the current adapters when given, else from fresh ones.
    if a.init and not a.fresh:
        rank, alpha = apply_adapter(torch, model, a.init, trainable=True)
    else:
        rank, alpha = apply_adapter(torch, model, None, trainable=True, rank=a.rank, alpha=a.alpha, gen=gen)
    model.to(device)
    params = [p for lin in lora_names(model).values() for p in (lin.A, lin.B)]
    opt = torch.optim.AdamW(params, lr=a.lr, weight_decay=0.0)

    def encode(m, kind, idx):
        return encode_ids(torch, m, [data.ids(kind, i) for i in idx], device, a.encode_chunk, False, bf16)

    def dev_eval(m):
        with torch.no_grad():
            q = encode(m, "doc", dev_idx)
            qn = encode(m, "docnf", dev_idx)
            r = {"plain": mrr(torch, q, encode(m, "code", dev_idx))}
            r["neutral"] = mrr(torch, q, encode(m, "neutral", dev_idx))
            r["random"] = mrr(torch, q, encode(m, "random", dev_idx))
            r["name_free_query"] = mrr(torch, qn, encode(m, "code", dev_idx))
        r["mean"] = (r["plain"] + r["neutral"] + r["random"]) / 3
        return {k: round(v, 4) for k, v in r.items()}

    # Hard negatives and distillation targets, from the frozen current encoder; computed
    # once per run folder and reused on resume.
    mined_path = os.path.join(a.run, "mined.pt")
    mined_for = {"bundle": identity["bundle"], "init": identity["init"], "base": identity["base"], "hard_doc_max": a.hard_doc_max}
    mined = torch.load(mined_path, weights_only=False) if os.path.exists(mined_path) and not a.restart else None
    if mined is not None and mined.get("for") != mined_for:
        log(f"{mined_path} was mined for another bundle, --init or --hard-doc-max: mining again")
        mined = None
    if mined is None:
        mined = {"hard": torch.full((len(arrays["package"]),), -1, dtype=torch.long)}
        src = teacher if teacher is not None else model
        t0 = time.time()
        # Encoded in blocks, each saved as it is done: on a CPU this stage takes an hour or
        # more, and an interrupted run goes on from its last block. The blocks are the same
        # whether or not the run was interrupted, so a resumed run mines the same negatives.
        blocks_dir = os.path.join(a.run, "mining")
        key = hashlib.sha256(json.dumps([identity, a.mining_block, a.encode_chunk]).encode()).hexdigest()[:12]
        os.makedirs(blocks_dir, exist_ok=True)
        done_now = reused = 0

        def encode_blocks(kind):
            nonlocal done_now, reused
            out = []
            for b0 in range(0, len(train_idx), a.mining_block):
                path = os.path.join(blocks_dir, f"{kind}-{key}-{b0}.pt")
                v = torch.load(path) if os.path.exists(path) and not a.restart else None
                if v is not None and len(v) == len(train_idx[b0:b0 + a.mining_block]):
                    reused += 1
                else:
                    if a.stop_mining_after is not None and done_now >= a.stop_mining_after:
                        log(f"mining stopped after {done_now} blocks")
                        sys.exit(0)
                    with torch.no_grad():
                        v = encode(src, kind, train_idx[b0:b0 + a.mining_block]).half().cpu()
                    torch.save(v, path + ".tmp")
                    os.replace(path + ".tmp", path)
                    done_now += 1
                out.append(v)
            return torch.cat(out).to(device)

        docs = encode_blocks("doc")
        codes = encode_blocks("code")
        if reused:
            log(f"mining: {reused} blocks from an earlier process, {done_now} encoded now")
        mined["target"] = torch.zeros((len(arrays["package"]), codes.shape[1]), dtype=torch.float16)
        mined["target"][torch.from_numpy(train_idx)] = codes.cpu()
        pk = arrays["package"][train_idx]
        hashes = arrays["hash"][train_idx]
        found = 0
        # Rows grouped by package in one sort (stable: ascending within a package).
        order = np.argsort(pk, kind="stable")
        bounds = np.flatnonzero(np.diff(pk[order])) + 1
        for rows in np.split(order, bounds):
            if len(rows) < 2:
                continue
            r = torch.from_numpy(rows).to(docs.device)
            d, c = docs[r].float(), codes[r].float()
            s = d @ c.t()
            dd = d @ d.t()
            same = torch.from_numpy(hashes[rows][:, None] == hashes[rows][None, :]).to(s.device)
            bad = same | (dd > a.hard_doc_max) | torch.eye(len(rows), dtype=torch.bool, device=s.device)
            s = s.masked_fill(bad, -2.0)
            best = s.argmax(1)
            ok = s.gather(1, best[:, None]).squeeze(1) > -2.0
            glob = torch.from_numpy(train_idx[rows])
            sel = torch.from_numpy(train_idx[rows[best.cpu().numpy()]])
            okc = ok.cpu()
            mined["hard"][glob[okc]] = sel[okc]
            found += int(okc.sum())
        mined["for"] = mined_for
        torch.save(mined, mined_path + ".tmp")
        os.replace(mined_path + ".tmp", mined_path)
        shutil.rmtree(blocks_dir, ignore_errors=True)
        log(f"hard negatives for {found} of {len(train_idx)} training pairs, {time.time() - t0:.0f} s")
    hard, target = mined["hard"], mined["target"]

    spe = max(1, len(train_idx) // a.batch)
    requested = a.steps or max(1, int(round(a.epochs * spe)))
    eval_seconds = 0.0
    state = None
    if os.path.exists(ckpt_path) and not a.restart:
        state = torch.load(ckpt_path, weights_only=False)
        for k in ("seed", "batch", "lr", "scale", "neutral", "random", "name_free", "twin", "hard", "hard_doc_max",
                  "grad_cache", "chunk", "fresh", "rank", "alpha", "limit_dev", "steps", "epochs"):
            if state["args"].get(k) != getattr(a, k):
                sys.exit(f"{ckpt_path}: the checkpoint was made with --{k.replace('_', '-')} {state['args'].get(k)}, not {getattr(a, k)}; use another --run or --restart")
        for k, v in identity.items():
            if state.get("identity", {}).get(k) != v:
                sys.exit(f"{ckpt_path}: the checkpoint was made with another {k} ({state.get('identity', {}).get(k)}, now {v}); use another --run or --restart")
        for name, lin in lora_names(model).items():
            lin.A.data.copy_(state["lora"][name + ".A"])
            lin.B.data.copy_(state["lora"][name + ".B"])
        opt.load_state_dict(state["opt"])
        step, total, curve = state["step"], state["total"], state["curve"]
        best = state["best"]
        log(f"resumed at step {step} of {total}")
    else:
        step, curve, best = 0, [], None
        total = requested
        if len(dev_idx):
            if teacher is not None and a.fresh:
                r = dev_eval(teacher)
                curve.append({"step": 0, "what": "current encoder (--init)", **r})
                log("current encoder on dev", r)
            t0 = time.time()
            r = dev_eval(model)
            eval_seconds = time.time() - t0
            curve.append({"step": 0, "what": "start", **r})
            log("start on dev", r)
            # The start is a candidate too: a run never ships adapters worse than it began with.
            best = {"step": 0, **r}
            save_adapter(model, os.path.join(a.run, "best.safetensors"), rank, alpha, torch.float16)

    def lr_at(s):
        # Linear warm-up over the first 5% of steps, then linear decay to zero.
        warm = max(1, int(0.05 * total))
        if s < warm:
            return a.lr * (s + 1) / warm
        return a.lr * max(0.0, (total - s) / max(1, total - warm))

    # How far --minutes has fitted the schedule: 0 not yet, 1 from a first estimate, 2 final.
    fitted = (2 if state.get("fitted") is True else int(state.get("fitted") or 0)) if state else 0

    def save(path):
        lora = {}
        for name, lin in lora_names(model).items():
            lora[name + ".A"] = lin.A.detach().cpu().clone()
            lora[name + ".B"] = lin.B.detach().cpu().clone()
        st = {"lora": lora, "opt": opt.state_dict(), "step": step, "total": total, "curve": curve, "best": best, "fitted": fitted,
              "args": args_of(a), "rank": rank, "alpha": alpha, "identity": identity}
        tmp = path + ".tmp"
        torch.save(st, tmp)
        os.replace(tmp, path)

    def evaluate_and_keep():
        nonlocal best, eval_seconds
        t0 = time.time()
        r = dev_eval(model)
        eval_seconds = time.time() - t0
        curve.append({"step": step, "seconds": round(time.time() - t_start, 1), **r})
        log(f"step {step}/{total} dev {r}")
        if best is None or r["mean"] > best["mean"]:
            best = {"step": step, **r}
            save_adapter(model, os.path.join(a.run, "best.safetensors"), rank, alpha, torch.float16)
        export()

    def export():
        # A copy of what is worth keeping, kept current while the run goes on, for a
        # machine whose run may be cut off.
        if a.export:
            os.makedirs(a.export, exist_ok=True)
            if os.path.exists(os.path.join(a.run, "best.safetensors")):
                shutil.copyfile(os.path.join(a.run, "best.safetensors"), os.path.join(a.export, "best.safetensors"))
            json.dump({"step": step, "total": total, "best": best, "curve": curve}, open(os.path.join(a.export, "curve.json"), "w"), indent=1)

    last_ckpt = time.time()
    t_train = time.time()
    step0 = step
    timed = None
    t_warm = t_mid = None

    def fit_to_minutes(per):
        # Steps that fit the time left, the dev evaluations to come included; never more
        # than the run asked for (--steps or --epochs).
        left = a.minutes * 60 - (time.time() - t_train)
        cost = per + (eval_seconds / a.eval_every if a.eval_every and len(dev_idx) else 0.0)
        return min(requested, max(step + 1, step + int(left / cost)))
    while step < total:
        if a.stop_after is not None and step >= a.stop_after:
            break
        epoch, pos = divmod(step, spe)
        perm = step_rng(a.seed, 1, epoch).permutation(train_idx)
        idx = perm[pos * a.batch:(pos + 1) * a.batch]
        rng = step_rng(a.seed, 2, step)
        u = rng.random(len(idx))
        kinds = np.where(u < a.neutral, "neutral", np.where(u < a.neutral + a.random, "random", "code"))
        docs = np.where(rng.random(len(idx)) < a.name_free, "docnf", "doc")
        hn = hard[torch.from_numpy(idx)].numpy() if a.hard else np.full(len(idx), -1)
        uh = rng.random(len(idx))
        hk = np.where(uh < a.neutral, "neutral", np.where(uh < a.neutral + a.random, "random", "code"))
        hidx = [(h, k) for h, k in zip(hn, hk) if h >= 0]
        seqs = [data.ids(k, i) for k, i in zip(docs, idx)] + [data.ids(k, i) for k, i in zip(kinds, idx)] + [data.ids(k, h) for h, k in hidx]
        n = len(idx)
        twin = torch.from_numpy(kinds != "code").to(device)
        tgt = target[torch.from_numpy(idx)].to(device).float()

        def loss_of(v):
            q, c, h = v[:n], v[n:2 * n], v[2 * n:]
            cand = torch.cat([c, h]) if len(h) else c
            s = (q @ cand.t()) * a.scale
            lab = torch.arange(n, device=device)
            loss = (F.cross_entropy(s, lab) + F.cross_entropy((c @ q.t()) * a.scale, lab)) / 2
            if a.twin > 0 and bool(twin.any()):
                loss = loss + a.twin * (1 - (c[twin] * tgt[twin]).sum(-1)).mean()
            return loss

        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        opt.zero_grad(set_to_none=True)
        if not a.grad_cache:
            v = encode_ids(torch, model, seqs, device, a.chunk, True, bf16)
            loss = loss_of(v)
            loss.backward()
        else:
            with torch.no_grad():
                v = encode_ids(torch, model, seqs, device, a.chunk, False, bf16)
            v = v.detach().requires_grad_(True)
            loss = loss_of(v)
            loss.backward()
            g = v.grad
            order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
            for s0 in range(0, len(order), a.chunk):
                part = order[s0:s0 + a.chunk]
                vp = encode_ids(torch, model, [seqs[i] for i in part], device, a.chunk, True, bf16)
                (vp * g[torch.tensor(part, device=device)]).sum().backward()
        opt.step()
        step += 1
        # --minutes fits the schedule to the time budget from this process's step time:
        # first over steps 5-25 (the first steps of a GPU run are several times slower),
        # then, since a GPU keeps speeding up for some dozens of steps more, once more over
        # steps 25-125. The total is saved with the checkpoints, so a resumed run keeps it.
        if a.minutes and fitted < 2:
            if step - step0 == 5:
                t_warm = time.time()
            elif step - step0 == 25:
                if fitted == 0:
                    timed = (time.time() - t_warm) / 20
                    fit = fit_to_minutes(timed)
                    fitted = 1
                    if fit < total:
                        log(f"{timed:.2f} s per step: {total} steps do not fit {a.minutes} min, training {fit}")
                        total = fit
                t_mid = time.time()
            elif step - step0 == 125 and t_mid is not None:
                timed = (time.time() - t_mid) / 100
                fit = fit_to_minutes(timed)
                fitted = 2
                if fit != total:
                    log(f"{timed:.2f} s per step since step {step - 100}: training {fit} steps, not {total}")
                    total = fit
        if step % a.log_every == 0:
            log(f"step {step}/{total} loss {loss.item():.4f} lr {lr_at(step - 1):.2e} {time.time() - t_start:.0f}s")
        if a.eval_every and step % a.eval_every == 0 and step < total and len(dev_idx):
            evaluate_and_keep()
        if time.time() - last_ckpt > a.checkpoint_minutes * 60 or (a.checkpoint_every and step % a.checkpoint_every == 0):
            save(ckpt_path)
            last_ckpt = time.time()
    if step >= total and len(dev_idx) and not (curve and curve[-1]["step"] == step):
        evaluate_and_keep()
    save(ckpt_path)
    save_adapter(model, os.path.join(a.run, "last.safetensors"), rank, alpha, torch.float32)
    report = {
        "done": step >= total, "step": step, "total_steps": total, "steps_per_epoch": spe,
        "training_pairs": int(len(train_idx)), "dev_pairs": int(len(dev_idx)), "packages": len(meta["packages"]),
        "dev_packages": sorted({meta["packages"][i] for i in arrays["package"][dev_mask]}),
        "device": torch.cuda.get_device_name(0) if device.type == "cuda" else f"cpu ({torch.get_num_threads()} threads)",
        "bf16": bf16, "seconds": round(time.time() - t_start, 1), "seconds_per_step": timed,
        "rank": rank, "alpha": alpha, "best": best, "curve": curve, "args": args_of(a), "bundle": meta.get("pairs_sha256"),
        "identity": identity,
    }
    json.dump(report, open(os.path.join(a.run, "report.json"), "w"), indent=1)
    export()
    if a.export:
        shutil.copyfile(os.path.join(a.run, "report.json"), os.path.join(a.export, "report.json"))
    log(f"{'finished' if step >= total else 'stopped'} at step {step}/{total}; best {best}")


def cmd_reference(a):
    import torch
    from tokenizers import Tokenizer
    torch.set_grad_enabled(False)
    model = load_base(torch, a.base, torch.device("cpu"))
    if a.adapter:
        apply_adapter(torch, model, a.adapter)
    tok = Tokenizer.from_file(os.path.join(a.base, "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    seqs = texts_to_ids(tok, REFERENCE_TEXTS, 256)
    v = encode_ids(torch, model, seqs, torch.device("cpu"), 1, False, False)
    json.dump({"texts": REFERENCE_TEXTS, "vectors": v.tolist()}, open(a.out, "w"))
    log(f"{a.out}: {len(REFERENCE_TEXTS)} reference vectors")


def cmd_ship(a):
    """The run's best adapters (f16) with reference vectors and a manifest, into --out."""
    import gzip
    os.makedirs(a.out, exist_ok=True)
    report = json.load(open(os.path.join(a.run, "report.json")))
    best = os.path.join(a.run, "best.safetensors")
    if report.get("best") is None or not os.path.exists(best):
        sys.exit(f"{a.run}: no best adapters (a run without dev pairs keeps only last.safetensors)")
    shutil.copyfile(best, os.path.join(a.out, "adapter.safetensors"))
    a.adapter = os.path.join(a.out, "adapter.safetensors")
    cmd_reference(argparse.Namespace(base=a.base, adapter=a.adapter, out=os.path.join(a.out, "reference.json")))
    rows = [l.rstrip("\n").split("\t") for l in gzip.open(a.list, "rt") if not l.startswith("#")]
    packages = sorted({r[0] for r in rows})
    dev_packages = sorted({r[0] for r in rows if r[2] == "dev"})
    manifest = {
        "what": "LoRA adapters for all-MiniLM-L6-v2: code search from descriptions (scripts/train-encoder.py)",
        "adapter_sha256": sha256_of(a.adapter),
        "rank": report["rank"], "alpha": report["alpha"], "dtype": "f16",
        "pairs": {"list": os.path.relpath(a.list), "total": len(rows), "train": sum(r[2] == "train" for r in rows),
                  "dev": sum(r[2] == "dev" for r in rows), "packages": len(packages), "dev_packages": dev_packages,
                  "list_sha256": sha256_of(a.list)},
        "training": {**{k: report.get(k) for k in ("step", "total_steps", "steps_per_epoch", "device", "bf16", "training_pairs", "dev_pairs")},
                     "seconds_of_the_last_process": report.get("seconds"), "identity": report.get("identity")},
        "recipe": {**{k: report["args"][k] for k in ("batch", "lr", "scale", "neutral", "random", "name_free", "twin", "hard", "hard_doc_max", "seed", "fresh")},
                   "rank": report["rank"], "alpha": report["alpha"]},
        "dev": {"best": report["best"], "curve": report["curve"]},
        "commands": a.commands or [],
    }
    json.dump(manifest, open(os.path.join(a.out, "manifest.json"), "w"), indent=1)
    shutil.copyfile(os.path.join(a.run, "report.json"), os.path.join(a.out, "report.json"))
    log(f"{a.out}: adapters from step {report['best']['step']}, manifest, reference vectors")


def cmd_compare(a):
    from safetensors.torch import load_file
    x, y = load_file(a.a), load_file(a.b)
    if set(x) != set(y):
        sys.exit(f"different tensors: {sorted(set(x) ^ set(y))[:4]}")
    diff = max((x[k].float() - y[k].float()).abs().max().item() for k in x)
    print(f"{len(x)} tensors, largest difference {diff:.3g}")
    sys.exit(0 if diff <= a.tolerance else 1)


# ---------------------------------------------------------------- pack / unpack

def half_base(base, out):
    """The base model with its matrices in f16 (half the bytes; vectors move by less than
    1e-6 in cosine, far below what bf16 training rounds away); small tensors stay f32."""
    import torch
    from safetensors.torch import load_file, save_file
    sd = load_file(os.path.join(base, "model.safetensors"))
    save_file({k: (v.half() if v.dim() == 2 and v.is_floating_point() and v.numel() > 100_000 else v.contiguous())
               for k, v in sd.items()}, out)


def cmd_pack(a):
    """Inputs of a training run cut into folders of at most --limit-mb each, for a machine
    that takes a bounded amount of input per call: each folder travels in its own call and
    `unpack` puts the files back together there, checking every piece's and file's hash."""
    import tempfile
    limit = int(a.limit_mb * 2**20)
    if os.path.isdir(a.out) and os.listdir(a.out):
        sys.exit(f"{a.out} is not empty: pack into a new folder (old parts would travel too)")
    tmp = tempfile.mkdtemp(prefix="pack-")
    try:
        files = [("bundle.xz", a.bundle), ("base/config.json", os.path.join(a.base, "config.json"))]
        if os.path.exists(os.path.join(a.base, "tokenizer.json")):
            files.append(("base/tokenizer.json", os.path.join(a.base, "tokenizer.json")))
        if a.half:
            half_base(a.base, os.path.join(tmp, "model.safetensors"))
            files.append(("base/model.safetensors", os.path.join(tmp, "model.safetensors")))
        else:
            files.append(("base/model.safetensors", os.path.join(a.base, "model.safetensors")))
        if a.init:
            files.append(("init.safetensors", a.init))
        files.sort(key=lambda f: -os.path.getsize(f[1]))
        script = os.path.abspath(__file__)
        # Every folder carries this script (to unpack itself) and the listing; room is kept
        # for both, and each folder's size is checked once written.
        reserve = os.path.getsize(script) + 64 * 1024
        if limit <= reserve + 1024:
            sys.exit(f"--limit-mb {a.limit_mb} leaves no room for data")
        room = limit - reserve
        parts, cur, left = [], [], room
        for name, path in files:
            size, off = os.path.getsize(path), 0
            while off < size:
                if left == 0:
                    parts.append(cur)
                    cur, left = [], room
                n = min(left, size - off)
                cur.append((name, path, off, n))
                off += n
                left -= n
        if cur:
            parts.append(cur)
        listing = {"files": {name: {"size": os.path.getsize(path), "sha256": sha256_of(path)} for name, path in files},
                   "pieces": [], "parts": len(parts)}
        for i, part in enumerate(parts):
            d = os.path.join(a.out, f"part{i + 1}")
            os.makedirs(d)
            for j, (name, path, off, n) in enumerate(part):
                piece = f"{i + 1}.{j}.piece"
                with open(path, "rb") as f:
                    f.seek(off)
                    data = f.read(n)
                open(os.path.join(d, piece), "wb").write(data)
                listing["pieces"].append({"part": i + 1, "piece": piece, "file": name, "offset": off,
                                          "bytes": n, "sha256": hashlib.sha256(data).hexdigest()})
        # Pieces of two packs never mix where they are staged: they live under the pack's id.
        listing["id"] = hashlib.sha256(json.dumps(listing, sort_keys=True).encode()).hexdigest()[:16]
        for i in range(len(parts)):
            d = os.path.join(a.out, f"part{i + 1}")
            shutil.copyfile(script, os.path.join(d, "train-encoder.py"))
            json.dump(listing, open(os.path.join(d, "pack.json"), "w"), indent=1)
            total = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
            if total > limit:
                sys.exit(f"{d}: {total} bytes, over the limit of {limit}")
            log(f"{d}: {total / 2**20:.1f} MiB")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cmd_unpack(a):
    """Copies a folder made by `pack` into --into; once every piece is there, rebuilds the
    files and checks their hashes. Exit 0 when the files are there and whole (also when an
    earlier call rebuilt them), 3 while parts are missing."""
    listing = json.load(open(os.path.join(a.part, "pack.json")))

    def whole(name, info):
        dst = os.path.join(a.into, name)
        return os.path.exists(dst) and os.path.getsize(dst) == info["size"] and sha256_of(dst) == info["sha256"]

    if all(whole(n, i) for n, i in listing["files"].items()):
        log(f"{a.into}: {len(listing['files'])} files already rebuilt and checked")
        return
    staged = os.path.join(a.into, f"pieces-{listing['id']}")
    os.makedirs(staged, exist_ok=True)
    shutil.copyfile(os.path.join(a.part, "train-encoder.py"), os.path.join(a.into, "train-encoder.py"))
    for e in listing["pieces"]:
        src = os.path.join(a.part, e["piece"])
        if os.path.exists(src):
            if sha256_of(src) != e["sha256"]:
                sys.exit(f"{src}: damaged piece (its hash differs); send part {e['part']} again")
            shutil.copyfile(src, os.path.join(staged, e["piece"]))
    missing = sorted({e["part"] for e in listing["pieces"] if not os.path.exists(os.path.join(staged, e["piece"]))})
    if missing:
        log(f"{a.into}: waiting for part(s) {', '.join(map(str, missing))}")
        sys.exit(3)
    for name, info in listing["files"].items():
        dst = os.path.join(a.into, name)
        os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
        with open(dst + ".tmp", "wb") as g:
            for e in sorted((e for e in listing["pieces"] if e["file"] == name), key=lambda e: e["offset"]):
                g.write(open(os.path.join(staged, e["piece"]), "rb").read())
        if os.path.getsize(dst + ".tmp") != info["size"] or sha256_of(dst + ".tmp") != info["sha256"]:
            sys.exit(f"{name}: rebuilt file does not match its hash")
        os.replace(dst + ".tmp", dst)
    shutil.rmtree(staged)
    log(f"{a.into}: {len(listing['files'])} files rebuilt and checked ({', '.join(sorted(listing['files']))})")


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--pairs", required=True)
    p.add_argument("--base", required=True, help="folder with tokenizer.json")
    p.add_argument("--out", required=True)
    p.add_argument("--max-len", type=int, default=256)
    p.add_argument("--doc-tokens", type=int, default=64)
    p.set_defaults(fn=cmd_prepare)
    t = sub.add_parser("train")
    t.add_argument("--bundle", required=True)
    t.add_argument("--base", required=True, help="folder with model.safetensors and config.json")
    t.add_argument("--run", required=True, help="run folder: checkpoints, adapters, report")
    t.add_argument("--init", help="current adapters: teacher, hard-negative miner and starting point")
    t.add_argument("--fresh", action="store_true", help="start from fresh adapters, not --init's")
    t.add_argument("--rank", type=int, default=64)
    t.add_argument("--alpha", type=float, default=128.0)
    t.add_argument("--device", default="auto")
    t.add_argument("--bf16", choices=("auto", "on", "off"), default="auto")
    t.add_argument("--threads", type=int, default=0)
    t.add_argument("--epochs", type=float, default=1.0)
    t.add_argument("--steps", type=int, default=0, help="train this many steps (instead of --epochs)")
    t.add_argument("--minutes", type=float, default=0, help="fit the schedule to this much training time")
    t.add_argument("--batch", type=int, default=256)
    t.add_argument("--chunk", type=int, default=128, help="sequences per forward pass (similar lengths together)")
    t.add_argument("--encode-chunk", type=int, default=512, help="sequences per forward pass without gradients")
    t.add_argument("--grad-cache", action="store_true", help="gradient caching: activations of one chunk at a time, any batch size")
    t.add_argument("--lr", type=float, default=2e-4)
    t.add_argument("--scale", type=float, default=20.0)
    t.add_argument("--neutral", type=float, default=0.3, help="share of code shown as its neutral-name twin")
    t.add_argument("--random", type=float, default=0.3, help="share shown as its random-name twin")
    t.add_argument("--name-free", type=float, default=0.5, help="share of queries without the function's identifiers")
    t.add_argument("--twin", type=float, default=1.0, help="weight of the twin term (0: off)")
    t.add_argument("--hard", type=int, default=1, help="1: add one mined hard negative per pair")
    t.add_argument("--hard-doc-max", type=float, default=0.9, help="descriptions this similar never make a negative")
    t.add_argument("--seed", type=int, default=20261127)
    t.add_argument("--eval-every", type=int, default=100)
    t.add_argument("--limit-dev", type=int, default=0)
    t.add_argument("--log-every", type=int, default=10)
    t.add_argument("--checkpoint-minutes", type=float, default=5.0)
    t.add_argument("--checkpoint-every", type=int, default=0)
    t.add_argument("--stop-after", type=int, help="stop after this step (an interruption, for tests)")
    t.add_argument("--mining-block", type=int, default=8192, help="pairs encoded between two saves while mining hard negatives")
    t.add_argument("--stop-mining-after", type=int, help="stop after encoding this many mining blocks (an interruption, for tests)")
    t.add_argument("--export", help="folder to keep a copy of the best adapters and the curve in, as they change")
    t.add_argument("--restart", action="store_true", help="ignore a checkpoint and saved mining work in --run (leave it out to resume)")
    t.add_argument("--deterministic", action="store_true")
    t.set_defaults(fn=cmd_train)
    r = sub.add_parser("reference")
    r.add_argument("--base", required=True)
    r.add_argument("--adapter")
    r.add_argument("--out", required=True)
    r.set_defaults(fn=cmd_reference)
    sh = sub.add_parser("ship", help="best adapters (f16), reference vectors and a manifest into a model folder")
    sh.add_argument("--run", required=True)
    sh.add_argument("--base", required=True)
    sh.add_argument("--list", required=True, help="the pair list the bundle came from")
    sh.add_argument("--out", required=True)
    sh.add_argument("--commands", nargs="*", help="the commands that made it, for the manifest")
    sh.set_defaults(fn=cmd_ship)
    c = sub.add_parser("compare", help="exit 0 when two adapter files hold the same tensors (within --tolerance)")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--tolerance", type=float, default=0.0)
    c.set_defaults(fn=cmd_compare)

    pk = sub.add_parser("pack", help="cut a run's inputs into folders of at most --limit-mb (for a machine with an input limit per call)")
    pk.add_argument("--bundle", required=True)
    pk.add_argument("--base", required=True, help="folder with model.safetensors and config.json")
    pk.add_argument("--init", help="the adapters to start from")
    pk.add_argument("--half", action="store_true", help="the base model's matrices in f16")
    pk.add_argument("--limit-mb", type=float, default=64.0, help="MiB per folder")
    pk.add_argument("--out", required=True)
    pk.set_defaults(fn=cmd_pack)
    up = sub.add_parser("unpack", help="put the files of `pack`'s folders back together (one folder per call)")
    up.add_argument("part", help="one folder made by pack")
    up.add_argument("--into", required=True)
    up.set_defaults(fn=cmd_unpack)
    a = ap.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()
