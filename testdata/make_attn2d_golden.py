#!/usr/bin/env python3
"""Golden files for the 2-D attention blocks (lib/attnkit/nn/attn2d.h), computed by PyTorch
modules written after the released code of each paper (SAGAN's Self_Attn, BigGAN-PyTorch's
Attention without spectral norm, the NONLocalBlock2D layout without batch norm), with random
weights and a non-zero gamma so that the attention shows in the output.

testdata/attn2d/<kind>.npz holds the state_dict's tensors under their PyTorch names, x
[2, 16, 6, 4], the output y and the attention [N, queries, keys]. Run from the repository's
top with Debian's python3-torch:
    /usr/bin/python3 testdata/make_attn2d_golden.py
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attn2d")
os.makedirs(OUT, exist_ok=True)
torch.manual_seed(20261125)
torch.set_default_dtype(torch.float64)


class Sagan(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.query_conv = nn.Conv2d(c, c // 8, 1)
        self.key_conv = nn.Conv2d(c, c // 8, 1)
        self.value_conv = nn.Conv2d(c, c, 1)
        self.gamma = nn.Parameter(torch.tensor([0.7]))

    def forward(self, x):
        n, c, h, w = x.shape
        q = self.query_conv(x).view(n, -1, h * w).permute(0, 2, 1)
        k = self.key_conv(x).view(n, -1, h * w)
        att = torch.softmax(torch.bmm(q, k), dim=-1)
        v = self.value_conv(x).view(n, -1, h * w)
        out = torch.bmm(v, att.permute(0, 2, 1)).view(n, c, h, w)
        return self.gamma * out + x, att


class BigGan(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.theta = nn.Conv2d(c, c // 8, 1, bias=False)
        self.phi = nn.Conv2d(c, c // 8, 1, bias=False)
        self.g = nn.Conv2d(c, c // 2, 1, bias=False)
        self.o = nn.Conv2d(c // 2, c, 1, bias=False)
        self.gamma = nn.Parameter(torch.tensor([0.6]))

    def forward(self, x):
        n, c, h, w = x.shape
        theta = self.theta(x).view(n, c // 8, h * w)
        phi = F.max_pool2d(self.phi(x), 2).view(n, c // 8, h * w // 4)
        g = F.max_pool2d(self.g(x), 2).view(n, c // 2, h * w // 4)
        beta = F.softmax(torch.bmm(theta.transpose(1, 2), phi), -1)
        o = self.o(torch.bmm(g, beta.transpose(1, 2)).view(n, c // 2, h, w))
        return self.gamma * o + x, beta


class NonLocal(nn.Module):
    def __init__(self, c, mode):
        super().__init__()
        ci = c // 2
        self.mode, self.ci = mode, ci
        self.g = nn.Conv2d(c, ci, 1)
        self.theta = nn.Conv2d(c, ci, 1)
        self.phi = nn.Conv2d(c, ci, 1)
        self.W = nn.Conv2d(ci, c, 1)
        if mode == "concat":
            self.concat_project = nn.Sequential(nn.Conv2d(2 * ci, 1, 1, bias=False), nn.ReLU())

    def forward(self, x):
        n, c, h, w = x.shape
        g = self.g(x).view(n, self.ci, -1).permute(0, 2, 1)
        if self.mode == "concat":
            t = self.theta(x).view(n, self.ci, -1, 1).repeat(1, 1, 1, h * w)
            p = self.phi(x).view(n, self.ci, 1, -1).repeat(1, 1, h * w, 1)
            f = self.concat_project(torch.cat([t, p], dim=1)).view(n, h * w, h * w)
            att = f / f.size(-1)
        else:
            t = self.theta(x).view(n, self.ci, -1).permute(0, 2, 1)
            p = self.phi(x).view(n, self.ci, -1)
            f = torch.matmul(t, p)
            att = F.softmax(f, dim=-1) if self.mode == "gaussian" else f / f.size(-1)
        y = torch.matmul(att, g).permute(0, 2, 1).contiguous().view(n, self.ci, h, w)
        return self.W(y) + x, att


x = torch.randn(2, 16, 6, 4)
blocks = {"sagan": Sagan(16), "biggan": BigGan(16), "nonlocal-gaussian": NonLocal(16, "gaussian"),
          "nonlocal-dot": NonLocal(16, "dot"), "nonlocal-concat": NonLocal(16, "concat")}
for name, m in blocks.items():
    with torch.no_grad():
        y, att = m(x)
    arrays = {k: v.numpy().astype(np.float32) for k, v in m.state_dict().items()}
    arrays.update(x=x.numpy().astype(np.float32), y=y.numpy().astype(np.float32),
                  attention=att.numpy().astype(np.float32))
    np.savez(os.path.join(OUT, name + ".npz"), **arrays)
