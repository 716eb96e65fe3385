#!/usr/bin/python3
"""Golden file for attnkit's BERT (lib/attnkit/models/bert/model.h) from PyTorch (Debian's
/usr/bin/python3, torch 1.13): testdata/bert/step.npz.

The same model written out in PyTorch, in float64, from its definition (not attnkit's code):
  x = LayerNorm(token[t] + segment[s] + position[i]); 2 post-norm encoder layers
  LN(x + MHA(x)), LN(x + W2 gelu(W1 x + b1) + b2), MHA with per-head scaled dot products,
  padded keys masked; MLM head at the masked positions: LN(gelu(W h + b)) E^T + bias, E the
  token table (tied); NSP head: W_o tanh(W_p h_cls + b_p) + b_o.
  loss = mean cross-entropy over the masked tokens + mean cross-entropy over the pairs.
Weights: random (seed 7), with attnkit's parameter names; the batch (3 sequences of lengths
9, 7, 5 padded to 9, masks given explicitly, NSP labels 1, 0, 1) is fixed here. The file holds
the weights (param/<name>), the batch, the loss, its two parts, the gradients (grad/<name>) of
every parameter, and every parameter after one torch.optim.Adam step (lr 0.01; after/<name>).
Integers are stored as float32 numbers (exact)."""
import math

import numpy as np
import torch

torch.manual_seed(7)
V, D, H, FF, L, MAXLEN = 12, 8, 2, 16, 2, 10  # V ordinary+reserved; [MASK] = V
DT = torch.float64


def randn(*shape, scale=0.3):
    return (torch.randn(*shape, dtype=DT) * scale).requires_grad_(True)


params = {}


def add(name, t):
    params[name] = t
    return t


add("embed.token.table", randn(V + 1, D))
add("embed.segment.table", randn(2, D))
add("embed.position.table", randn(MAXLEN, D))
add("embed.norm.gain", (1 + 0.1 * torch.randn(D, dtype=DT)).requires_grad_(True))
add("embed.norm.bias", randn(D, scale=0.1))
for layer in range(L):
    p = f"encoder.{layer}."
    for m in "qkvo":
        add(p + f"self_attn.{m}.W", randn(D, D))
        add(p + f"self_attn.{m}.b", randn(D, scale=0.1))
    add(p + "ff.l1.W", randn(FF, D))
    add(p + "ff.l1.b", randn(FF, scale=0.1))
    add(p + "ff.l2.W", randn(D, FF))
    add(p + "ff.l2.b", randn(D, scale=0.1))
    for n in ("norm1", "norm2"):
        add(p + f"{n}.gain", (1 + 0.1 * torch.randn(D, dtype=DT)).requires_grad_(True))
        add(p + f"{n}.bias", randn(D, scale=0.1))
add("mlm.dense.W", randn(D, D))
add("mlm.dense.b", randn(D, scale=0.1))
add("mlm.norm.gain", (1 + 0.1 * torch.randn(D, dtype=DT)).requires_grad_(True))
add("mlm.norm.bias", randn(D, scale=0.1))
add("mlm.bias", randn(V + 1, scale=0.1))
add("nsp.pooler.W", randn(D, D))
add("nsp.pooler.b", randn(D, scale=0.1))
add("nsp.out.W", randn(2, D))
add("nsp.out.b", randn(2, scale=0.1))

CLS, SEP, MASK = 1, 2, V
# Three sequences: [CLS] A [SEP] B [SEP]; tokens already masked (12 = [MASK]).
tokens = [
    [CLS, 5, MASK, 7, SEP, 9, 4, MASK, SEP],  # positions 2 (was 6), 7 (was 10), 3 kept (7)
    [CLS, 4, 4, SEP, 11, 8, SEP],             # position 2 a random token (4; was 5)
    [CLS, MASK, SEP, 6, SEP],                 # position 1 (was 9)
]
segments = [[0, 0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1]]
masked = [(0, 2, 6), (0, 7, 10), (0, 3, 7), (1, 2, 5), (2, 1, 9)]  # (item, position, label)
is_next = [1, 0, 1]
B = len(tokens)
N = max(len(t) for t in tokens)
lengths = [len(t) for t in tokens]
tok = torch.zeros(B, N, dtype=torch.long)
seg = torch.zeros(B, N, dtype=torch.long)
for b in range(B):
    tok[b, : lengths[b]] = torch.tensor(tokens[b])
    seg[b, : lengths[b]] = torch.tensor(segments[b])


def layer_norm(x, g, b):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + 1e-5) * g + b


def gelu(x):
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2.0)))


def linear(x, name):
    return x @ params[name + ".W"].T + params[name + ".b"]


def forward():
    P = params
    pos = torch.arange(N).expand(B, N)
    x = P["embed.token.table"][tok] + P["embed.segment.table"][seg] + P["embed.position.table"][pos]
    x = layer_norm(x, P["embed.norm.gain"], P["embed.norm.bias"])
    keymask = torch.tensor([[j < lengths[b] for j in range(N)] for b in range(B)])
    dh = D // H
    for layer in range(L):
        p = f"encoder.{layer}."
        q = linear(x, p + "self_attn.q").view(B, N, H, dh).transpose(1, 2)
        k = linear(x, p + "self_attn.k").view(B, N, H, dh).transpose(1, 2)
        v = linear(x, p + "self_attn.v").view(B, N, H, dh).transpose(1, 2)
        s = q @ k.transpose(-1, -2) / math.sqrt(dh)
        s = s.masked_fill(~keymask[:, None, None, :], float("-inf"))
        a = torch.softmax(s, -1) @ v
        a = linear(a.transpose(1, 2).reshape(B, N, D), p + "self_attn.o")
        x = layer_norm(x + a, P[p + "norm1.gain"], P[p + "norm1.bias"])
        f = linear(gelu(linear(x, p + "ff.l1")), p + "ff.l2")
        x = layer_norm(x + f, P[p + "norm2.gain"], P[p + "norm2.bias"])
    h = torch.stack([x[b, i] for b, i, _ in masked])
    h = layer_norm(gelu(linear(h, "mlm.dense")), P["mlm.norm.gain"], P["mlm.norm.bias"])
    mlm_logits = h @ P["embed.token.table"].T + P["mlm.bias"]
    labels = torch.tensor([y for _, _, y in masked])
    mlm = torch.nn.functional.cross_entropy(mlm_logits, labels)
    cls = x[:, 0]
    nsp_logits = linear(torch.tanh(linear(cls, "nsp.pooler")), "nsp.out")
    nsp = torch.nn.functional.cross_entropy(nsp_logits, torch.tensor(is_next))
    return mlm, nsp


out = {}
for k, v in params.items():
    out["param/" + k] = v.detach().numpy().copy()
mlm, nsp = forward()
loss = mlm + nsp
loss.backward()
out["loss"] = np.array([loss.item()])
out["mlm"] = np.array([mlm.item()])
out["nsp"] = np.array([nsp.item()])
for k, v in params.items():
    out["grad/" + k] = v.grad.numpy().copy()
opt = torch.optim.Adam(list(params.values()), lr=0.01)
opt.step()
for k, v in params.items():
    out["after/" + k] = v.detach().numpy().copy()
out["tokens"] = tok.numpy()
out["segments"] = seg.numpy()
out["lengths"] = np.array(lengths)
out["masked"] = np.array(masked)
out["is_next"] = np.array(is_next)
# The smallest non-zero |gradient|: Adam's first step is lr g / (|g| + eps), ±lr unless |g|
# is near eps = 1e-8 (then float32 rounding of g would matter).
g = np.concatenate([np.abs(v.grad.numpy()).ravel() for v in params.values()])
print("loss", loss.item(), "smallest non-zero |grad|", g[g > 0].min())
np.savez("testdata/bert/step.npz", **{k: np.asarray(v, dtype=np.float32) for k, v in out.items()})
