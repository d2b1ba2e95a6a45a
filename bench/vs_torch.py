"""PyTorch side of `bench/vs_torch.ts`: the same Qwen2-shaped decoder, the same sizes, timed the same way.

Reads one JSON job on stdin ({"config": HF config dict, "plan": {...}, "threads": N, "repeats": R}) and
prints one JSON object with generation / scoring / training-step timings (medians over R calls after one
untimed warm-up). The model is written out in plain torch (RMSNorm, RoPE, GQA with QKV bias, SwiGLU,
untied or tied LM head) so that no `transformers` install is needed; weights are random (speed only).
Debian's python3-torch with libopenblas0-pthread is the reference the issue names.

Optional job keys for `bench/gpu.ts --torch`: "device" ("cuda" runs everything there and
synchronises before each clock read) and plan "generateBatches" (a list: one generation timing per
batch, reported as "generateAll").
"""

import json
import resource
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        h, nh, nkv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
        hd = c.get("head_dim") or h // nh
        self.nh, self.nkv, self.hd = nh, nkv, hd
        bias = c.get("attention_bias", c.get("model_type") == "qwen2")  # Qwen2: QKV bias
        self.q = torch.nn.Linear(h, nh * hd, bias=bias)
        self.k = torch.nn.Linear(h, nkv * hd, bias=bias)
        self.v = torch.nn.Linear(h, nkv * hd, bias=bias)
        self.o = torch.nn.Linear(nh * hd, h, bias=False)
        f = c["intermediate_size"]
        self.gate = torch.nn.Linear(h, f, bias=False)
        self.up = torch.nn.Linear(h, f, bias=False)
        self.down = torch.nn.Linear(f, h, bias=False)
        self.n1 = torch.nn.Parameter(torch.ones(h))
        self.n2 = torch.nn.Parameter(torch.ones(h))
        self.eps = c.get("rms_norm_eps", 1e-6)

    def norm(self, x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * w

    def forward(self, x, cos, sin, cache=None):
        b, t, _ = x.shape
        y = self.norm(x, self.n1)
        q = self.q(y).view(b, t, self.nh, self.hd).transpose(1, 2)
        k = self.k(y).view(b, t, self.nkv, self.hd).transpose(1, 2)
        v = self.v(y).view(b, t, self.nkv, self.hd).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        if cache is not None:
            if cache.get("k") is not None:
                k = torch.cat([cache["k"], k], 2)
                v = torch.cat([cache["v"], v], 2)
            cache["k"], cache["v"] = k, v
        rep = self.nh // self.nkv
        kk = k.repeat_interleave(rep, 1)
        vv = v.repeat_interleave(rep, 1)
        # torch 1.13 (Debian bookworm) has no scaled_dot_product_attention: the plain form.
        att = (q @ kk.transpose(-1, -2)) / math.sqrt(self.hd)
        if t > 1:
            tk = kk.shape[2]
            mask = torch.ones(t, tk, dtype=torch.bool, device=x.device).tril(tk - t)
            att = att.masked_fill(~mask, float("-inf"))
        a = torch.softmax(att, -1) @ vv
        x = x + self.o(a.transpose(1, 2).reshape(b, t, -1))
        y = self.norm(x, self.n2)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


def rope(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return x * cos + torch.cat([-x2, x1], -1) * sin


class Model(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.emb = torch.nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.blocks = torch.nn.ModuleList(Block(c) for _ in range(c["num_hidden_layers"]))
        self.nf = torch.nn.Parameter(torch.ones(c["hidden_size"]))
        self.tied = c.get("tie_word_embeddings", False)
        if not self.tied:
            self.head = torch.nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        hd = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
        inv = 1.0 / (c.get("rope_theta", 10000.0) ** (torch.arange(0, hd, 2).float() / hd))
        self.register_buffer("inv", inv, persistent=False)

    def forward(self, ids, start=0, caches=None):
        t = ids.shape[1]
        pos = torch.arange(start, start + t, device=ids.device).float()
        f = torch.outer(pos, self.inv)
        emb = torch.cat([f, f], -1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        x = self.emb(ids)
        for i, blk in enumerate(self.blocks):
            x = blk(x, cos, sin, None if caches is None else caches[i])
        x = self.blocks[0].norm(x, self.nf)
        return x @ self.emb.weight.T if self.tied else self.head(x)


def sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(fn, repeats):
    fn()  # warm-up
    xs = []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        xs.append(time.perf_counter() - t0)
    return statistics.median(xs)


def main():
    job = json.load(sys.stdin)
    c, plan, repeats = job["config"], job["plan"], job["repeats"]
    torch.set_num_threads(job["threads"])
    torch.manual_seed(0)
    device = job.get("device", "cpu")
    t0 = time.perf_counter()
    model = Model(c).to(device)
    init_s = time.perf_counter() - t0
    n_params = sum(p.numel() for p in model.parameters())
    V = c["vocab_size"]
    out = {"torch": torch.__version__, "threads": torch.get_num_threads(), "parameters": n_params,
           "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
           "initSeconds": init_s}

    B, P, N = plan["generateBatch"], plan["promptTokens"], plan["newTokens"]
    prompts = torch.randint(0, V, (B, P), device=device)

    @torch.no_grad()
    def generate():
        caches = [{} for _ in model.blocks]
        logits = model(prompts, 0, caches)
        tok = torch.multinomial(F.softmax(logits[:, -1].float(), -1), 1)
        for i in range(1, N):
            logits = model(tok, P + i - 1, caches)
            tok = torch.multinomial(F.softmax(logits[:, -1].float(), -1), 1)

    s = timed(generate, repeats)
    out["generate"] = {"batch": B, "seconds": s, "tokensPerS": B * N / s}
    if "generateBatches" in plan:
        out["generateAll"] = []
        for B in plan["generateBatches"]:
            prompts = torch.randint(0, V, (B, P), device=device)
            s = timed(generate, repeats)
            out["generateAll"].append({"batch": B, "seconds": s, "tokensPerS": B * N / s})

    SB, T, C = plan["scoreBatch"], P + N, N
    seqs = torch.randint(0, V, (SB, T), device=device)

    def logprobs():
        logits = model(seqs[:, :-1])[:, -C:]
        lp = torch.log_softmax(logits.float(), -1)
        return lp.gather(-1, seqs[:, -C:, None]).squeeze(-1)

    with torch.no_grad():
        s = timed(logprobs, repeats)
    out["scoreForward"] = {"batch": SB, "seqTokens": T, "seconds": s, "tokensPerS": SB * T / s}

    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)

    def train_step():
        opt.zero_grad(set_to_none=True)
        loss = -logprobs().mean()
        loss.backward()
        opt.step()

    s = timed(train_step, repeats)
    out["trainStep"] = {"batch": SB, "seqTokens": T, "seconds": s, "tokensPerS": SB * T / s}
    # ru_maxrss is in KiB on Linux: the process's peak resident set, this model only (one
    # process per model).
    out["peakRssBytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
