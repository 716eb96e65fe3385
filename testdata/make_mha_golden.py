#!/usr/bin/python3
"""Golden files for attn-mha (lib/attnkit/attention/mha.h), computed by PyTorch's own
torch.nn.MultiheadAttention (batch_first=True) in float64 on float32-representable inputs.

    /usr/bin/python3 testdata/make_mha_golden.py      # writes testdata/mha/

Parameters are written exactly as a PyTorch user would:
np.savez("p.npz", **{k: v.numpy() for k, v in mha.state_dict().items()}).
Inputs and parameters are float32 .npy/.npz; outputs are text (%.9g), one row per line, a
blank line between the matrices of a batch; head weights (rank 4) are float64 .npy.
Deterministic: torch.manual_seed.
"""
import os

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mha")
torch.manual_seed(20240601)


def save_text(name, a):
    a = np.asarray(a, dtype=np.float64)
    mats = [a] if a.ndim == 2 else list(a)
    with open(os.path.join(OUT, name), "w") as f:
        for m, mat in enumerate(mats):
            if m:
                f.write("\n")
            for row in mat:
                f.write(" ".join("%.9g" % x for x in row) + "\n")


def module(E, H, kdim=None, vdim=None, bias=True):
    m = torch.nn.MultiheadAttention(E, H, kdim=kdim, vdim=vdim, bias=bias, batch_first=True)
    with torch.no_grad():  # biases are zero at init: give them values worth testing
        for name, p in m.named_parameters():
            if "bias" in name:
                p.uniform_(-0.5, 0.5)
    # Round the parameters to float32 (what the .npz holds), then compute in float64.
    state = {k: v.detach().float() for k, v in m.state_dict().items()}
    m.load_state_dict(state)
    return m.double(), state


def save_params(name, state, drop=(), reshape=None):
    arrays = {k: v.numpy() for k, v in state.items() if k not in drop}
    if reshape:
        for k, shape in reshape.items():
            arrays[k] = arrays[k].reshape(shape) if shape else arrays[k][:-1]
    np.savez(os.path.join(OUT, name), **arrays)


def inputs(*shape):
    return torch.randn(*shape).float().double()


def case(prefix, m, q, k, v, attn_mask=None, key_padding_mask=None):
    with torch.no_grad():
        y, w = m(q, k, v, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                 need_weights=True, average_attn_weights=True)
        _, hw = m(q, k, v, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                  need_weights=True, average_attn_weights=False)
    save_text(prefix + "_context.txt", y.numpy() if y.dim() == 3 else y.numpy())
    save_text(prefix + "_weights.txt", w.numpy())
    np.save(os.path.join(OUT, prefix + "_head_weights.npy"), hw.numpy())


def main():
    os.makedirs(OUT, exist_ok=True)
    # Self-attention, a batch of 2, E = 8, 2 heads.
    m, st = module(8, 2)
    save_params("self.npz", st)
    X = inputs(2, 5, 8)
    np.save(os.path.join(OUT, "X.npy"), X.float().numpy())
    case("self", m, X, X, X)
    # Causal self-attention of one sequence (2-D input), 4 heads.
    m4, st4 = module(8, 4)
    save_params("self4.npz", st4)
    X1 = inputs(6, 8)
    np.save(os.path.join(OUT, "X1.npy"), X1.float().numpy())
    causal = torch.triu(torch.ones(6, 6, dtype=torch.bool), 1)  # True = masked
    case("causal", m4, X1.unsqueeze(0), X1.unsqueeze(0), X1.unsqueeze(0), attn_mask=causal)
    # A 0/1 mask file (attnkit: 0 = masked; PyTorch: True = masked), no row fully masked.
    mask = (torch.rand(6, 6) > 0.4)
    mask[:, 2] = True
    np.savetxt(os.path.join(OUT, "mask.txt"), mask.numpy().astype(np.float64), fmt="%g")
    case("maskfile", m4, X1.unsqueeze(0), X1.unsqueeze(0), X1.unsqueeze(0), attn_mask=~mask)
    # Key padding: valid key lengths 5 and 3.
    np.savetxt(os.path.join(OUT, "lengths.txt"), np.array([5, 3]), fmt="%d")
    kpm = torch.arange(5)[None, :] >= torch.tensor([5, 3])[:, None]  # True = padding
    case("padding", m, X, X, X, key_padding_mask=kpm)
    # Cross-attention with other key and value widths (q/k/v_proj_weight), 4 heads.
    mc, stc = module(8, 4, kdim=6, vdim=3)
    save_params("cross.npz", stc)
    Q = inputs(2, 3, 8)
    K = inputs(2, 7, 6)
    V = inputs(2, 7, 3)
    for n, t in (("Qc", Q), ("Kc", K), ("Vc", V)):
        np.save(os.path.join(OUT, n + ".npy"), t.float().numpy())
    case("cross", mc, Q, K, V)
    # Cross-attention with the same widths (in_proj_weight) and causal with n_q < n_k.
    K8 = inputs(2, 7, 8)
    np.save(os.path.join(OUT, "K8.npy"), K8.float().numpy())
    case("cross8", m, Q, K8, K8, attn_mask=torch.triu(torch.ones(3, 7, dtype=torch.bool), 1))
    # No biases (bias=False).
    mn, stn = module(8, 2, bias=False)
    save_params("nobias.npz", stn)
    case("nobias", mn, X, X, X)
    # Broken parameter files.
    save_params("no_out_weight.npz", st, drop=("out_proj.weight",))
    save_params("bad_in_weight.npz", st, reshape={"in_proj_weight": (12, 16)})
    save_params("no_out_bias.npz", st, drop=("out_proj.bias",))
    save_params("bad_in_bias.npz", st, reshape={"in_proj_bias": None})


if __name__ == "__main__":
    main()
