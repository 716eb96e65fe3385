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


# ---- Released modules, as their authors wrote them, and their state_dicts as saved ----------
# BigGAN-PyTorch (ajbrock/BigGAN-PyTorch, layers.py) Attention, with which_conv=nn.Conv2d (its
# SNConv2d only re-parameterises the weights): gamma is a 0-d tensor, torch.tensor(0.).
class Attention(nn.Module):
    def __init__(self, ch, which_conv=nn.Conv2d, name='attention'):
        super(Attention, self).__init__()
        self.ch = ch
        self.which_conv = which_conv
        self.theta = self.which_conv(self.ch, self.ch // 8, kernel_size=1, padding=0, bias=False)
        self.phi = self.which_conv(self.ch, self.ch // 8, kernel_size=1, padding=0, bias=False)
        self.g = self.which_conv(self.ch, self.ch // 2, kernel_size=1, padding=0, bias=False)
        self.o = self.which_conv(self.ch // 2, self.ch, kernel_size=1, padding=0, bias=False)
        # Learnable gain parameter
        self.gamma = nn.Parameter(torch.tensor(0.), requires_grad=True)

    def forward(self, x, y=None):
        theta = self.theta(x)
        phi = F.max_pool2d(self.phi(x), [2, 2])
        g = F.max_pool2d(self.g(x), [2, 2])
        theta = theta.view(-1, self.ch // 8, x.shape[2] * x.shape[3])
        phi = phi.view(-1, self.ch // 8, x.shape[2] * x.shape[3] // 4)
        g = g.view(-1, self.ch // 2, x.shape[2] * x.shape[3] // 4)
        beta = F.softmax(torch.bmm(theta.transpose(1, 2), phi), -1)
        o = self.o(torch.bmm(g, beta.transpose(1, 2)).view(-1, self.ch // 2, x.shape[2], x.shape[3]))
        self.beta = beta  # kept for the golden file (the released forward returns o only)
        return self.gamma * o + x


# The common NONLocalBlock2D (AlexHex7/Non-local_pytorch, lib/non_local_*.py), its three
# forms, with the defaults sub_sample=True and bn_layer=True.
class _NonLocalBlockND(nn.Module):
    def __init__(self, in_channels, inter_channels=None, dimension=2, sub_sample=True,
                 bn_layer=True, mode='embedded_gaussian'):
        super(_NonLocalBlockND, self).__init__()
        assert dimension == 2
        self.mode = mode
        self.sub_sample = sub_sample
        self.in_channels = in_channels
        self.inter_channels = inter_channels
        if self.inter_channels is None:
            self.inter_channels = in_channels // 2
            if self.inter_channels == 0:
                self.inter_channels = 1
        conv_nd = nn.Conv2d
        max_pool_layer = nn.MaxPool2d(kernel_size=(2, 2))
        bn = nn.BatchNorm2d
        self.g = conv_nd(in_channels=self.in_channels, out_channels=self.inter_channels,
                         kernel_size=1, stride=1, padding=0)
        if bn_layer:
            self.W = nn.Sequential(
                conv_nd(in_channels=self.inter_channels, out_channels=self.in_channels,
                        kernel_size=1, stride=1, padding=0),
                bn(self.in_channels)
            )
            nn.init.constant_(self.W[1].weight, 0)
            nn.init.constant_(self.W[1].bias, 0)
        else:
            self.W = conv_nd(in_channels=self.inter_channels, out_channels=self.in_channels,
                             kernel_size=1, stride=1, padding=0)
            nn.init.constant_(self.W.weight, 0)
            nn.init.constant_(self.W.bias, 0)
        self.theta = conv_nd(in_channels=self.in_channels, out_channels=self.inter_channels,
                             kernel_size=1, stride=1, padding=0)
        self.phi = conv_nd(in_channels=self.in_channels, out_channels=self.inter_channels,
                           kernel_size=1, stride=1, padding=0)
        if mode == 'concatenation':
            self.concat_project = nn.Sequential(
                nn.Conv2d(self.inter_channels * 2, 1, 1, 1, 0, bias=False),
                nn.ReLU()
            )
        if sub_sample:
            self.g = nn.Sequential(self.g, max_pool_layer)
            self.phi = nn.Sequential(self.phi, max_pool_layer)

    def forward(self, x, return_nl_map=False):
        batch_size = x.size(0)
        g_x = self.g(x).view(batch_size, self.inter_channels, -1)
        g_x = g_x.permute(0, 2, 1)
        if self.mode == 'concatenation':
            theta_x = self.theta(x).view(batch_size, self.inter_channels, -1, 1)
            phi_x = self.phi(x).view(batch_size, self.inter_channels, 1, -1)
            h = theta_x.size(2)
            w = phi_x.size(3)
            theta_x = theta_x.repeat(1, 1, 1, w)
            phi_x = phi_x.repeat(1, 1, h, 1)
            concat_feature = torch.cat([theta_x, phi_x], dim=1)
            f = self.concat_project(concat_feature)
            b, _, h, w = f.size()
            f = f.view(b, h, w)
            N = f.size(-1)
            f_div_C = f / N
        else:
            theta_x = self.theta(x).view(batch_size, self.inter_channels, -1)
            theta_x = theta_x.permute(0, 2, 1)
            phi_x = self.phi(x).view(batch_size, self.inter_channels, -1)
            f = torch.matmul(theta_x, phi_x)
            if self.mode == 'embedded_gaussian':
                f_div_C = F.softmax(f, dim=-1)
            else:  # dot_product
                N = f.size(-1)
                f_div_C = f / N
        y = torch.matmul(f_div_C, g_x)
        y = y.permute(0, 2, 1).contiguous()
        y = y.view(batch_size, self.inter_channels, *x.size()[2:])
        W_y = self.W(y)
        z = W_y + x
        if return_nl_map:
            return z, f_div_C
        return z


def round_to_float32(m):
    """Weights and buffers rounded to float32, so that the file holds exactly what computed y."""
    with torch.no_grad():
        for t in list(m.parameters()) + list(m.buffers()):
            if t.is_floating_point():
                t.copy_(t.float().double())


xr = torch.randn(2, 16, 6, 4).float().double()
released = {}
att = Attention(16)
with torch.no_grad():
    att.gamma.fill_(0.8)  # 0 as released: the block would be the identity
round_to_float32(att)
released["released-biggan"] = att
for mode, name in [("embedded_gaussian", "gaussian"), ("dot_product", "dot"),
                   ("concatenation", "concat")]:
    m = _NonLocalBlockND(16, mode=mode)
    with torch.no_grad():  # W.1 starts at 0 (the identity) and its statistics at 0 and 1
        m.W[1].weight.uniform_(0.5, 1.5)
        m.W[1].bias.normal_()
        m.W[1].running_mean.normal_()
        m.W[1].running_var.uniform_(0.5, 2.0)
        m.W[1].num_batches_tracked.fill_(37)
    round_to_float32(m)
    released["released-nonlocal-" + name] = m
for name, m in released.items():
    m.eval()  # BatchNorm from its running statistics
    with torch.no_grad():
        if name == "released-biggan":
            y = m(xr)
            a = m.beta
        else:
            y, a = m(xr, return_nl_map=True)
    # The state_dict as users save it: each tensor in its own dtype and shape (float32
    # weights, the 0-d gamma, BatchNorm's int64 num_batches_tracked).
    arrays = {k: (v.float() if v.is_floating_point() else v).numpy()
              for k, v in m.state_dict().items()}
    arrays.update(x=xr.numpy().astype(np.float32), y=y.numpy().astype(np.float32),
                  attention=a.numpy().astype(np.float32))
    np.savez(os.path.join(OUT, name + ".npz"), **arrays)
