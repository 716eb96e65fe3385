#!/usr/bin/python3
"""Goldens for lib/attnkit/nn from PyTorch (run with Debian's /usr/bin/python3, torch 1.13):
testdata/nn/cells.npz holds, for an RNNCell, a GRUCell and an LSTMCell (n = 3 inputs,
m = 4 hidden units, batch 2), PyTorch's weights (weight_ih, weight_hh, bias_ih, bias_hh), an
input sequence x [3 steps, 2, 3], the hidden (and cell) states after each step, and the
gradient of sum(h_T * r) for a fixed r with respect to weight_ih and x. Also a
cross-entropy with label smoothing and ignore_index, and its gradient."""
import numpy as np
import torch

torch.manual_seed(5)
out = {}
x = torch.randn(3, 2, 3, dtype=torch.float64)
r = torch.randn(2, 4, dtype=torch.float64)
for name, cls in (("rnn", torch.nn.RNNCell), ("gru", torch.nn.GRUCell), ("lstm", torch.nn.LSTMCell)):
    cell = cls(3, 4).double()
    xs = x.clone().requires_grad_(True)
    h = torch.zeros(2, 4, dtype=torch.float64)
    c = torch.zeros(2, 4, dtype=torch.float64)
    hs, cs = [], []
    for t in range(3):
        if name == "lstm":
            h, c = cell(xs[t], (h, c))
            cs.append(c)
        else:
            h = cell(xs[t], h)
        hs.append(h)
    (h * r).sum().backward()
    for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        out[f"{name}_{k}"] = getattr(cell, k).detach().numpy()
    out[f"{name}_h"] = torch.stack(hs).detach().numpy()
    if cs:
        out[f"{name}_c"] = torch.stack(cs).detach().numpy()
    out[f"{name}_grad_weight_ih"] = cell.weight_ih.grad.numpy()
    out[f"{name}_grad_x"] = xs.grad.numpy()
out["x"] = x.numpy()
out["r"] = r.numpy()

logits = torch.randn(5, 7, dtype=torch.float64, requires_grad=True)
targets = torch.tensor([3, 0, 6, 0, 2])
loss = torch.nn.functional.cross_entropy(logits, targets, ignore_index=0, label_smoothing=0.1)
loss.backward()
out["ce_logits"] = logits.detach().numpy()
out["ce_targets"] = targets.numpy().astype(np.float64)
out["ce_loss"] = np.array([loss.item()])
out["ce_grad"] = logits.grad.numpy()

np.savez("testdata/nn/cells.npz", **{k: np.asarray(v, dtype=np.float32) for k, v in out.items()})
