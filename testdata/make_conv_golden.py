#!/usr/bin/env python3
"""Golden files for the image ops of the autodiff engine (lib/attnkit/autodiff/ops_conv.cpp),
computed by PyTorch (torch.nn.functional.conv2d, max_pool2d, avg_pool2d) in float64 and
saved as float32.

Each case is testdata/conv/<name>.npz with the input x, the weights w and bias b (conv), the
options, the output y, an upstream gradient r (the loss is sum(y * r)), and the gradients
gx, gw, gb. Run from the repository's top with Debian's python3-torch:
    /usr/bin/python3 testdata/make_conv_golden.py
"""
import os

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conv")
os.makedirs(OUT, exist_ok=True)
g = torch.Generator().manual_seed(20261125)


def rand(*shape):
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def save(name, **arrays):
    np.savez(os.path.join(OUT, name + ".npz"),
             **{k: np.asarray(v.detach().numpy() if torch.is_tensor(v) else v, dtype=np.float32)
                for k, v in arrays.items()})


# conv2d: (name, N, C, H, W, O, kh, kw, stride, padding, dilation, bias)
convs = [
    ("conv_k3_p1", 2, 3, 7, 6, 4, 3, 3, (1, 1), (1, 1), (1, 1), True),
    ("conv_rect_s2_d2", 2, 2, 8, 9, 3, 2, 3, (2, 1), (1, 0), (1, 2), True),
    ("conv_1x1", 3, 5, 4, 4, 2, 1, 1, (1, 1), (0, 0), (1, 1), False),
    ("conv_k3_s2_p2_d2", 1, 2, 9, 7, 3, 3, 3, (2, 2), (2, 2), (2, 2), True),
    ("conv_1x1_s2", 2, 3, 5, 6, 4, 1, 1, (2, 2), (0, 0), (1, 1), True),
]
for name, n, c, h, w, o, kh, kw, stride, pad, dil, bias in convs:
    x = rand(n, c, h, w).requires_grad_()
    wt = rand(o, c, kh, kw).requires_grad_()
    b = rand(o).requires_grad_() if bias else None
    y = F.conv2d(x, wt, b, stride=stride, padding=pad, dilation=dil)
    r = rand(*y.shape)
    (y * r).sum().backward()
    arrays = dict(x=x, w=wt, y=y, r=r, gx=x.grad, gw=wt.grad,
                  opts=np.array(stride + pad + dil, dtype=np.float32))
    if bias:
        arrays.update(b=b, gb=b.grad)
    save(name, **arrays)

# pooling: (name, kind, N, C, H, W, kernel, stride, padding)
pools = [
    ("max_k2", "max", 2, 3, 6, 8, 2, 2, 0),
    ("max_k3_s2_p1", "max", 2, 2, 7, 9, 3, 2, 1),
    ("avg_k2", "avg", 2, 3, 6, 8, 2, 2, 0),
    ("avg_k3_s2_p1", "avg", 2, 2, 7, 9, 3, 2, 1),
    ("avg_k3_s1", "avg", 1, 2, 5, 5, 3, 1, 0),
]
for name, kind, n, c, h, w, k, s, p in pools:
    x = rand(n, c, h, w).requires_grad_()
    f = F.max_pool2d if kind == "max" else F.avg_pool2d
    y = f(x, k, s, p)
    r = rand(*y.shape)
    (y * r).sum().backward()
    save(name, x=x, y=y, r=r, gx=x.grad, opts=np.array([k, s, p], dtype=np.float32))

# batch norm: (name, training); x [3, 4, 5, 2], momentum 0.1, eps 1e-5
for name, training in [("bn_train", True), ("bn_eval", False)]:
    x = (rand(3, 4, 5, 2) * 2 + 0.5).requires_grad_()
    gamma = rand(4).requires_grad_()
    beta = rand(4).requires_grad_()
    rm0, rv0 = rand(4), rand(4).abs() + 0.5
    rm, rv = rm0.clone(), rv0.clone()
    y = F.batch_norm(x, rm, rv, gamma, beta, training=training, momentum=0.1, eps=1e-5)
    r = rand(*y.shape)
    (y * r).sum().backward()
    save(name, x=x, gamma=gamma, beta=beta, rm0=rm0, rv0=rv0, y=y, r=r, gx=x.grad,
         ggamma=gamma.grad, gbeta=beta.grad, rm1=rm, rv1=rv)
