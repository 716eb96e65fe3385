#!/usr/bin/env python3
"""Golden file for models/han/model.h (Hierarchical Attention Networks, Yang et al. 2016): the
model written out in PyTorch from the paper's equations, with random weights under attnkit's
parameter names, run in float64 on three documents, each sentence and each document on its own
(no padding anywhere: the C++ model's masks must give the same).

  u_it = tanh(W_w h_it + b_w), a_it = softmax_t(u_it . u_w), s_i = sum_t a_it h_it
  u_i = tanh(W_s h_i + b_s),   a_i = softmax_i(u_i . u_s),   v = sum_i a_i h_i
  p = softmax(W_c v + b_c); h = [forward GRU; backward GRU] (torch.nn.GRU, bidirectional)

Writes testdata/han/params.npz (vocabulary 12, embed 5, GRU 4 per direction, context 6,
3 classes) and testdata/han/golden.npz: probs [3, 3]; per document d: w<d> [sentences,
longest sentence] (0 past a sentence's end) and s<d> [sentences].
Run: /usr/bin/python3 testdata/make_han_golden.py
"""
import os

import numpy as np
import torch

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(33)
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "han")
os.makedirs(here, exist_ok=True)

V, E, H, A, C = 12, 5, 4, 6, 3
D = 2 * H
P = {}


def u(name, *shape, s=0.6):
    P[name] = rng.uniform(-s, s, size=shape)


u("embed.table", V, E, s=1.0)
for enc, n_in in (("word_gru", E), ("sent_gru", D)):
    for d in ("", "_reverse"):
        u(f"{enc}.l0{d}.W_ih", 3 * H, n_in)
        u(f"{enc}.l0{d}.W_hh", 3 * H, H)
        u(f"{enc}.l0{d}.b_ih", 3 * H)
        u(f"{enc}.l0{d}.b_hh", 3 * H)
u("word_att.W", A, D); u("word_att.b", A); u("word_context", A, s=1.0)
u("sent_att.W", A, D); u("sent_att.b", A); u("sent_context", A, s=1.0)
u("out.W", C, D); u("out.b", C)

docs = [
    [[4, 5, 6], [7, 8]],
    [[9]],
    [[4, 10, 11, 5, 3], [6], [7, 7, 8], [11, 4]],
]

# The C++ side reads the weights as float32: compute with exactly those values.
P = {k: v.astype(np.float32).astype(np.float64) for k, v in P.items()}
T = {k: torch.tensor(v) for k, v in P.items()}


def gru(name, n_in):
    g = torch.nn.GRU(n_in, H, batch_first=True, bidirectional=True)
    with torch.no_grad():
        for d, suffix in (("", ""), ("_reverse", "_reverse")):
            getattr(g, "weight_ih_l0" + suffix).copy_(T[f"{name}.l0{d}.W_ih"])
            getattr(g, "weight_hh_l0" + suffix).copy_(T[f"{name}.l0{d}.W_hh"])
            getattr(g, "bias_ih_l0" + suffix).copy_(T[f"{name}.l0{d}.b_ih"])
            getattr(g, "bias_hh_l0" + suffix).copy_(T[f"{name}.l0{d}.b_hh"])
    return g


word_gru, sent_gru = gru("word_gru", E), gru("sent_gru", D)


def attend(h, W, b, ctx):
    a = torch.softmax(torch.tanh(h @ W.T + b) @ ctx, dim=0)
    return a, (a[:, None] * h).sum(0)


out = {}
probs = []
with torch.no_grad():
    for i, doc in enumerate(docs):
        svecs, wrows = [], []
        L = max(len(s) for s in doc)
        for s in doc:
            x = T["embed.table"][torch.tensor(s)][None]
            h = word_gru(x)[0][0]
            a, sv = attend(h, T["word_att.W"], T["word_att.b"], T["word_context"])
            svecs.append(sv)
            wrows.append(np.concatenate([a.numpy(), np.zeros(L - len(s))]))
        hs = sent_gru(torch.stack(svecs)[None])[0][0]
        b, v = attend(hs, T["sent_att.W"], T["sent_att.b"], T["sent_context"])
        probs.append(torch.softmax(v @ T["out.W"].T + T["out.b"], dim=0).numpy())
        out[f"w{i}"] = np.stack(wrows)
        out[f"s{i}"] = b.numpy()
out["probs"] = np.stack(probs)
np.savez(os.path.join(here, "params.npz"), **{k: v.astype(np.float32) for k, v in P.items()})
np.savez(os.path.join(here, "golden.npz"), **out)
print("wrote", here)
