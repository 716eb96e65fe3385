#!/usr/bin/env python3
"""Golden files for models/caption/model.h (Show, Attend and Tell, soft attention): the model written
out in PyTorch from the paper's equations, with random weights under attnkit's parameter
names, run in float64 on a batch of random images with captions of different lengths
(teacher forcing, the CNN's batch norm in training mode).

Writes testdata/caption/params.npz (every parameter of the C++ model, channels 3,4, embed 5,
hidden 6, attention 7, a vocabulary of 9 ids) and testdata/caption/golden.npz:
  images [3, 8, 8]; caps [3, 3] (word ids, -1 = none); alpha0, logits0, beta0 (the first
  step), h1, c1 (the state after it); alpha [T, 3, 4] and logits [T, 3, 9] of every step;
  nll (the summed cross-entropy), reg (sum over images of sum_i (1 - sum_t alpha_ti)^2 over
  each image's real steps).
Run: /usr/bin/python3 testdata/make_caption_golden.py
"""
import os

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(17)
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "caption")
os.makedirs(here, exist_ok=True)

channels, E, Hd, A, V = [3, 4], 5, 6, 7, 9
D = channels[-1]
P = {}


def u(name, *shape, s=0.5):
    P[name] = rng.uniform(-s, s, size=shape)


cin = 1
for i, c in enumerate(channels):
    u(f"cnn.b{i}.conv.weight", c, cin, 3, 3)
    P[f"cnn.b{i}.bn.weight"] = rng.uniform(0.5, 1.5, size=c)
    u(f"cnn.b{i}.bn.bias", c)
    cin = c
u("init_h.W", Hd, D); u("init_h.b", Hd)
u("init_c.W", Hd, D); u("init_c.b", Hd)
u("embed.table", V, E)
u("att.W_a.W", A, D)
u("att.W_h.W", A, Hd); u("att.W_h.b", A)
u("f_beta.W", 1, Hd); u("f_beta.b", 1)
u("lstm.W_ih", 4 * Hd, E + D); u("lstm.W_hh", 4 * Hd, Hd); u("lstm.b", 4 * Hd)
u("out.L_h.W", E, Hd); u("out.L_h.b", E)
u("out.L_z.W", E, D)
u("out.L_o.W", V, E); u("out.L_o.b", V)
u("att.v", A)

images = rng.uniform(0, 1, size=(3, 8, 8))
caps = [[4, 5, 6], [7], [5, 8]]  # ids >= 4 are words; 1 = <bos>, 2 = <eos>, 0 = <pad>

T = {k: torch.tensor(v) for k, v in P.items()}
x = torch.tensor(images)[:, None]
for i in range(len(channels)):
    x = F.conv2d(x, T[f"cnn.b{i}.conv.weight"], padding=1)
    x = F.batch_norm(x, None, None, T[f"cnn.b{i}.bn.weight"], T[f"cnn.b{i}.bn.bias"],
                     training=True, eps=1e-5)
    x = F.max_pool2d(F.relu(x), 2)
B, _, gh, gw = x.shape
a = x.reshape(B, D, gh * gw).transpose(1, 2)  # [B, L, D]
mean = a.mean(1)
h = torch.tanh(mean @ T["init_h.W"].T + T["init_h.b"])
c = torch.tanh(mean @ T["init_c.W"].T + T["init_c.b"])
keys = a @ T["att.W_a.W"].T
steps = max(len(k) for k in caps) + 1
alphas, logits_all, nll, cover = [], [], 0.0, torch.zeros(B, gh * gw)
out = {}
for t in range(steps):
    prev = [1 if t == 0 else (k[t - 1] if t - 1 < len(k) else 0) for k in caps]
    ey = T["embed.table"][prev]
    q = h @ T["att.W_h.W"].T + T["att.W_h.b"]
    e = torch.tanh(keys + q[:, None, :]) @ T["att.v"]
    al = torch.softmax(e, dim=1)
    ctx = (al[:, :, None] * a).sum(1)
    beta = torch.sigmoid(h @ T["f_beta.W"].T + T["f_beta.b"])
    z = beta * ctx
    g = torch.cat([ey, z], 1) @ T["lstm.W_ih"].T + h @ T["lstm.W_hh"].T + T["lstm.b"]
    gi, gf, gg, go = g.chunk(4, 1)
    c = torch.sigmoid(gf) * c + torch.sigmoid(gi) * torch.tanh(gg)
    h = torch.sigmoid(go) * torch.tanh(c)
    lg = (ey + h @ T["out.L_h.W"].T + T["out.L_h.b"] + z @ T["out.L_z.W"].T) @ T["out.L_o.W"].T \
        + T["out.L_o.b"]
    if t == 0:
        out.update(alpha0=al, logits0=lg, beta0=beta, h1=h, c1=c)
    alphas.append(al)
    logits_all.append(lg)
    lp = torch.log_softmax(lg, 1)
    for b, k in enumerate(caps):
        if t <= len(k):
            y = k[t] if t < len(k) else 2
            nll = nll - lp[b, y]
            cover[b] += al[b]
reg = ((1 - cover) ** 2).sum()
capm = -np.ones((3, 3))
for b, k in enumerate(caps):
    capm[b, :len(k)] = k
out.update(alpha=torch.stack(alphas), logits=torch.stack(logits_all), nll=nll.reshape(1),
           reg=reg.reshape(1))
np.savez(os.path.join(here, "params.npz"), **{k: v.astype(np.float32) for k, v in P.items()})
np.savez(os.path.join(here, "golden.npz"), images=images.astype(np.float32),
         caps=capm.astype(np.float32),
         **{k: v.detach().numpy().astype(np.float32) for k, v in out.items()})
print("wrote", here)
