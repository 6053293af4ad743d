#!/usr/bin/env python3
"""Fine-tune all-MiniLM-L6-v2 for code search with LoRA adapters (run where a GPU is).

Contrastive training with in-batch negatives (symmetric InfoNCE, scale 20) on
(doc comment, function) pairs mined by `beryl mine-pairs`; with probability --anon the
code side is the anonymized twin with neutral names, with --rand the one with random
names (both without comments), so the encoder learns to read what code does, not only
what it is called. Only LoRA adapters on the
six blocks' linear layers are trained; the base model is the one setup.sh installs, and
beryl merges the adapters into it at load time (src/features/encoder.rs).

Packages listed in --dev-packages are held out: the script reports doc→code MRR among
them (all dev pairs as candidates), for the base model and the adapted one, on plain
and anonymized code. Writes adapter.safetensors, reference.json (vectors of fixed texts
for the Rust parity test) and report.json to --out.
"""
import argparse, gzip, json, math, os, random, sys, time

import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import save_file
from transformers import AutoModel, AutoTokenizer

TARGETS = ("attention.self.query", "attention.self.key", "attention.self.value",
           "attention.output.dense", "intermediate.dense", "output.dense")
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


class LoRA(nn.Module):
    def __init__(self, base: nn.Linear, r: int, alpha: float):
        super().__init__()
        self.base = base
        self.r, self.scale = r, alpha / r
        self.A = nn.Parameter(torch.randn(r, base.in_features) / math.sqrt(base.in_features))
        self.B = nn.Parameter(torch.zeros(base.out_features, r))

    def forward(self, x):
        return self.base(x) + (x @ self.A.t() @ self.B.t()) * self.scale


def add_lora(model, r, alpha):
    wrapped = {}
    for name, mod in list(model.named_modules()):
        for t in TARGETS:
            if name.endswith(t) and isinstance(mod, nn.Linear) and ".layer." in f".{name}":
                parent = model.get_submodule(name.rsplit(".", 1)[0])
                lora = LoRA(mod, r, alpha)
                setattr(parent, name.rsplit(".", 1)[1], lora)
                wrapped[name] = lora
    return wrapped


def encode(model, tok, texts, dev, max_len, bs=256):
    out = []
    for i in range(0, len(texts), bs):
        b = tok(texts[i:i + bs], padding=True, truncation=True, max_length=max_len, return_tensors="pt").to(dev)
        h = model(**b).last_hidden_state
        m = b["attention_mask"].unsqueeze(-1).to(h.dtype)
        v = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
        out.append(F.normalize(v, dim=-1))
    return torch.cat(out)


def mrr(q, c):
    s = q @ c.t()
    gold = s.diag().unsqueeze(1)
    ranks = (s > gold).sum(1) + 1
    return (1.0 / ranks.float()).mean().item()


def norm_ws(s):
    return " ".join(s.split())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dev-packages", default="jsoup,lua5.4,re2")
    ap.add_argument("--anon", type=float, default=0.3, help="probability of the neutral-name twin")
    ap.add_argument("--rand", type=float, default=0.3, help="probability of the random-name twin")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--alpha", type=float, default=32.0)
    ap.add_argument("--max-len", type=int, default=256)
    ap.add_argument("--seed", type=int, default=20261124)
    a = ap.parse_args()
    random.seed(a.seed)
    torch.manual_seed(a.seed)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    opener = gzip.open if a.pairs.endswith(".gz") else open
    pairs = [json.loads(l) for l in opener(a.pairs, "rt")]
    held = set(a.dev_packages.split(","))
    train = [p for p in pairs if p["source"] not in held]
    dev_pairs = [p for p in pairs if p["source"] in held]
    print(f"{len(train)} training pairs, {len(dev_pairs)} dev pairs ({sorted(held)}) on {dev}", flush=True)

    tok = AutoTokenizer.from_pretrained(a.base)
    model = AutoModel.from_pretrained(a.base).float().to(dev)
    model.eval()

    def dev_eval():
        with torch.no_grad(), torch.autocast(dev, dtype=torch.bfloat16, enabled=dev == "cuda"):
            q = encode(model, tok, [p["doc"] for p in dev_pairs], dev, a.max_len).float()
            c = encode(model, tok, [norm_ws(p["code"]) for p in dev_pairs], dev, a.max_len).float()
            n = encode(model, tok, [norm_ws(p["code_anon"] or p["code"]) for p in dev_pairs], dev, a.max_len).float()
            r = encode(model, tok, [norm_ws(p.get("code_rand") or p["code"]) for p in dev_pairs], dev, a.max_len).float()
        return {"plain_mrr": mrr(q, c), "anonymized_mrr": mrr(q, n), "random_names_mrr": mrr(q, r)}

    base_dev = dev_eval()
    print("base dev", base_dev, flush=True)
    for p in model.parameters():
        p.requires_grad_(False)
    wrapped = add_lora(model, a.rank, a.alpha)
    model.to(dev)
    params = [p for l in wrapped.values() for p in (l.A, l.B)]
    opt = torch.optim.AdamW(params, lr=a.lr, weight_decay=0.0)
    steps = a.epochs * (len(train) // a.batch)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 20) * max(0.0, 1 - s / max(1, steps)))
    t0 = time.time()
    step = 0
    for ep in range(a.epochs):
        random.shuffle(train)
        model.train()
        for i in range(0, len(train) - a.batch + 1, a.batch):
            batch = train[i:i + a.batch]
            docs = [p["doc"] for p in batch]
            codes = []
            for p in batch:
                r = random.random()
                if r < a.anon and p["code_anon"]:
                    codes.append(norm_ws(p["code_anon"]))
                elif r < a.anon + a.rand and p.get("code_rand"):
                    codes.append(norm_ws(p["code_rand"]))
                else:
                    codes.append(norm_ws(p["code"]))
            with torch.autocast(dev, dtype=torch.bfloat16, enabled=dev == "cuda"):
                q = encode(model, tok, docs, dev, a.max_len, bs=a.batch)
                c = encode(model, tok, codes, dev, a.max_len, bs=a.batch)
                s = (q.float() @ c.float().t()) * 20.0
                lab = torch.arange(len(batch), device=dev)
                loss = (F.cross_entropy(s, lab) + F.cross_entropy(s.t(), lab)) / 2
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            if step % 25 == 0:
                print(f"epoch {ep} step {step}/{steps} loss {loss.item():.4f} {time.time() - t0:.0f}s", flush=True)
    model.eval()
    tuned_dev = dev_eval()
    print("tuned dev", tuned_dev, flush=True)
    os.makedirs(a.out, exist_ok=True)
    tensors = {}
    for name, l in wrapped.items():
        tensors[f"{name}.lora_A"] = l.A.detach().float().cpu().contiguous()
        tensors[f"{name}.lora_B"] = l.B.detach().float().cpu().contiguous()
    save_file(tensors, os.path.join(a.out, "adapter.safetensors"), metadata={"rank": str(a.rank), "alpha": str(a.alpha)})
    with torch.no_grad():
        ref = encode(model, tok, REFERENCE_TEXTS, dev, a.max_len).float().cpu().tolist()
    json.dump({"texts": REFERENCE_TEXTS, "vectors": ref}, open(os.path.join(a.out, "reference.json"), "w"))
    report = {
        "training_pairs": len(train), "dev_pairs": len(dev_pairs), "dev_packages": sorted(held),
        "sources": sorted({p["source"] for p in train}), "steps": step, "epochs": a.epochs, "batch": a.batch,
        "lr": a.lr, "rank": a.rank, "alpha": a.alpha, "neutral_twin_probability": a.anon, "random_twin_probability": a.rand, "max_len": a.max_len,
        "seed": a.seed, "seconds": round(time.time() - t0, 1), "device": torch.cuda.get_device_name(0) if dev == "cuda" else "cpu",
        "dev_base": base_dev, "dev_tuned": tuned_dev,
    }
    json.dump(report, open(os.path.join(a.out, "report.json"), "w"), indent=2)
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
