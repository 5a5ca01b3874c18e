#!/usr/bin/env python3
"""PyTorch's side of `npm run bench:hf` (src/bench/hf.ts): the same jobs on the same model,
so that one run prints both and their ratio.

The model is a Llama decoder written out in plain PyTorch with random weights (std 0.02,
norms 1): RMSNorm (eps 1e-5), rotary positions with transformers' half rotation,
grouped-query attention, a SwiGLU MLP and a head tied to the embedding. Shapes:
smollm2-135m (30 layers, width 576, 9 heads and 3 key/value heads of 64, MLP 1536,
vocabulary 49152, theta 100000) and tiny (a quick check).

Jobs, each run once to warm up and then timed as the mean of --reps runs:
  generate  --gen B,P,N: B prompts of P random tokens, N new tokens each sampled at
            temperature 1 with a key/value cache; figure: B*N / seconds
  long      --long B,P,N (default 16,64,512): the same with long answers, the cache holding
            P + N positions; warmed up on 8 new tokens, not a whole run
  lora      --train B,T: one clipped policy-gradient step (clip 0.2, one advantage per
            sequence, mean over tokens) on B sequences of T random tokens, LoRA rank 16,
            alpha 32 on the seven projections of every block, base frozen, AdamW;
            figure: B*T / seconds
  full      the same step with every weight trained

Needs Debian's torch and a threaded BLAS:
    apt-get install -y python3-torch libopenblas0-pthread
Prints one JSON line per job.
"""
import argparse
import json
import math
import sys
import time

import torch
import torch.nn.functional as F

SHAPES = {
    "smollm2-135m": dict(layers=30, d=576, heads=9, kv=3, hd=64, ffn=1536, vocab=49152, theta=100000.0),
    "tiny": dict(layers=2, d=64, heads=4, kv=2, hd=16, ffn=160, vocab=384, theta=10000.0),
}
PROJECTIONS = ("q", "k", "v", "o", "gate", "up", "down")


class Projection(torch.nn.Module):
    """y = x W^T, plus (x A^T) B^T * alpha / r when an adapter of rank r is attached (B starts at zero)."""

    def __init__(self, n_in, n_out, rank, alpha):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(n_out, n_in) * 0.02)
        self.rank = rank
        if rank:
            bound = 1 / math.sqrt(n_in)
            self.lora_a = torch.nn.Parameter(torch.empty(rank, n_in).uniform_(-bound, bound))
            self.lora_b = torch.nn.Parameter(torch.zeros(n_out, rank))
            self.scaling = alpha / rank

    def forward(self, x):
        y = F.linear(x, self.weight)
        if self.rank:
            y = y + F.linear(F.linear(x, self.lora_a), self.lora_b) * self.scaling
        return y


def rms_norm(x, gain, eps=1e-5):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * gain


def rotate(x, cos, sin):
    """x cos + rotate_half(x) sin, rotate_half(x) = [-x2, x1] on each head's halves."""
    x1, x2 = x.chunk(2, -1)
    return x * cos + torch.cat((-x2, x1), -1) * sin


class DecoderLayer(torch.nn.Module):
    def __init__(self, s, rank, alpha):
        super().__init__()
        d, hd = s["d"], s["hd"]
        self.s = s
        self.attn_norm = torch.nn.Parameter(torch.ones(d))
        self.mlp_norm = torch.nn.Parameter(torch.ones(d))
        sizes = dict(
            q=(d, s["heads"] * hd),
            k=(d, s["kv"] * hd),
            v=(d, s["kv"] * hd),
            o=(s["heads"] * hd, d),
            gate=(d, s["ffn"]),
            up=(d, s["ffn"]),
            down=(s["ffn"], d),
        )
        self.proj = torch.nn.ModuleDict({n: Projection(*sizes[n], rank, alpha) for n in PROJECTIONS})

    def forward(self, x, cos, sin, cache):
        s, p = self.s, self.proj
        B, T, _ = x.shape
        h = rms_norm(x, self.attn_norm)

        def heads(name, n):
            return p[name](h).view(B, T, n, s["hd"]).transpose(1, 2)  # [B, n, T, hd]

        q = rotate(heads("q", s["heads"]), cos, sin)
        k = rotate(heads("k", s["kv"]), cos, sin)
        v = heads("v", s["kv"])
        if cache is not None:
            if cache:
                k, v = torch.cat((cache[0], k), 2), torch.cat((cache[1], v), 2)
            cache[:] = [k, v]
        # each key/value head serves heads / kv query heads in a row (transformers' repeat_kv)
        group = s["heads"] // s["kv"]
        k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
        scores = q @ k.transpose(2, 3) / math.sqrt(s["hd"])
        if T > 1:
            S = k.shape[2]
            future = torch.ones(T, S, dtype=torch.bool).triu(S - T + 1)
            scores = scores.masked_fill(future, float("-inf"))
        a = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, -1)
        x = x + p["o"](a)
        h = rms_norm(x, self.mlp_norm)
        return x + p["down"](F.silu(p["gate"](h)) * p["up"](h))


class Decoder(torch.nn.Module):
    def __init__(self, s, rank=0, alpha=0):
        super().__init__()
        self.s = s
        self.embed = torch.nn.Parameter(torch.randn(s["vocab"], s["d"]) * 0.02)
        self.layers = torch.nn.ModuleList(DecoderLayer(s, rank, alpha) for _ in range(s["layers"]))
        self.norm = torch.nn.Parameter(torch.ones(s["d"]))
        half = torch.arange(0, s["hd"], 2, dtype=torch.float32) / s["hd"]
        self.inv_freq = 1.0 / s["theta"] ** half

    def hidden(self, ids, start=0, caches=None):
        T = ids.shape[1]
        angles = torch.outer(torch.arange(start, start + T, dtype=torch.float32), self.inv_freq)
        angles = torch.cat((angles, angles), -1)
        cos, sin = angles.cos(), angles.sin()
        x = F.embedding(ids, self.embed)
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, None if caches is None else caches[i])
        return rms_norm(x, self.norm)

    def logits(self, h):
        return h @ self.embed.t()


@torch.no_grad()
def generate(model, B, P, N):
    caches = [[] for _ in model.layers]
    ids = torch.randint(0, model.s["vocab"], (B, P))
    for step in range(N):
        if N > 64 and step > 0 and step % 64 == 0:  # a long answer says how far it got
            print(f"torch: {step}/{N} tokens", file=sys.stderr, flush=True)
        h = model.hidden(ids, 0 if step == 0 else P + step - 1, caches)
        probs = model.logits(h[:, -1]).softmax(-1)
        ids = torch.multinomial(probs, 1)


def train_step(model, optimizer, B, T):
    ids = torch.randint(0, model.s["vocab"], (B, T))
    advantage = torch.randn(B, 1)
    h = model.hidden(ids)
    logp = model.logits(h[:, :-1]).log_softmax(-1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    ratio = torch.exp(logp - logp.detach())
    loss = -torch.minimum(ratio * advantage, ratio.clamp(0.8, 1.2) * advantage).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def timed(run, reps, warm_up=None, job=""):
    # says after the warm-up and each timed run how long the rest should take
    w0 = time.perf_counter()
    (warm_up or run)()
    print(f"torch: {job} warmed up in {time.perf_counter() - w0:.1f} s; {reps} timed runs", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    for r in range(1, reps + 1):
        run()
        each = (time.perf_counter() - t0) / r
        print(f"torch: {job} run {r}/{reps}, {each:.1f} s each, about {round(each * (reps - r))} s left", file=sys.stderr, flush=True)
    return (time.perf_counter() - t0) / reps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--shape", default="smollm2-135m", choices=SHAPES)
    ap.add_argument("--jobs", default="generate,lora,full")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--gen", default="16,64,64", help="B,P,N")
    ap.add_argument("--long", default="16,64,512", help="B,P,N")
    ap.add_argument("--train", default="8,256", help="B,T")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    s = SHAPES[a.shape]
    gB, gP, gN = map(int, a.gen.split(","))
    lB, lP, lN = map(int, a.long.split(","))
    tB, tT = map(int, a.train.split(","))
    for job in a.jobs.split(","):
        if job == "generate":
            model = Decoder(s)
            seconds, tokens = timed(lambda: generate(model, gB, gP, gN), a.reps, job=job), gB * gN
        elif job == "long":
            model = Decoder(s)
            run = lambda: generate(model, lB, lP, lN)
            seconds, tokens = timed(run, a.reps, lambda: generate(model, lB, lP, 8), job=job), lB * lN
        elif job in ("lora", "full"):
            model = Decoder(s, 16, 32) if job == "lora" else Decoder(s)
            trained = [p for n, p in model.named_parameters() if job == "full" or "lora_" in n]
            for p in model.parameters():
                p.requires_grad_(any(p is t for t in trained))
            optimizer = torch.optim.AdamW(trained, lr=1e-5)
            seconds, tokens = timed(lambda: train_step(model, optimizer, tB, tT), a.reps, job=job), tB * tT
        else:
            raise SystemExit(f"torch_hf.py: unknown job '{job}' (generate, long, lora, full)")
        row = dict(impl=f"pytorch-{torch.__version__}", threads=a.threads, shape=a.shape, job=job)
        print(json.dumps(dict(row, seconds=round(seconds, 4), tokens_per_s=round(tokens / seconds, 1))), flush=True)


if __name__ == "__main__":
    main()
