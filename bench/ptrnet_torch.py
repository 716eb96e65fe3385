"""The PyTorch peer of bench/ptrnet.cpp: the same pointer network (Vinyals et al. 2015),
data shapes, mask, optimiser and decoding, float32 on the CPU.
   ptrnet_torch.py train N STEPS THREADS
     -> pytorch train tspN threads steps sec_per_step examples_per_s loss
   ptrnet_torch.py decode N PROBLEMS BEAM THREADS
     -> pytorch decode tspN threads problems sec problems_per_s beam
Model: points embedded by a linear map (2 -> 128), LSTM encoder (128 units), an "end" vector
in front of the encoder outputs, LSTM decoder cell reading the last chosen point's embedding
(a learned "go" first), additive attention v' tanh(W e_j + U d) as the output. TSP-N tours
(nearest-neighbour tours as labels: the cost is the same), batch 128, teacher forcing,
cross-entropy summed over the steps and divided by their count, Adam 1e-3, gradients clipped
at norm 2. The mask: a chosen point is closed, the first one reopens once every point is
chosen, then only the end. Greedy decoding in batches of 64; beam search one problem at a
time with the beam's rows as the batch."""
import sys
import time

import torch
from torch import nn
import torch.nn.functional as F

E = H = 128
B = 128
task, n = sys.argv[1], int(sys.argv[2])
torch.manual_seed(1)
NEG = -1e9


class Ptr(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(2, E)
        self.enc = nn.LSTM(E, H, batch_first=True)
        self.dec = nn.LSTMCell(E, H)
        self.go = nn.Parameter(torch.randn(E))
        self.end = nn.Parameter(torch.randn(H))
        self.W = nn.Linear(H, H, bias=False)
        self.U = nn.Linear(H, H, bias=False)
        self.v = nn.Parameter(torch.rand(H) / H ** 0.5)

    def encode(self, x):
        b = x.shape[0]
        xe = self.inp(x)
        out, (h, c) = self.enc(xe)
        keys = self.W(torch.cat([self.end.expand(b, 1, H), out], 1))
        return xe, keys, h[0], c[0]

    def scores(self, keys, h):
        return torch.tanh(keys + self.U(h)[:, None, :]) @ self.v


def mask_after(mask, chosen, first, m, rows):
    """The mask after step m chose `chosen` (1-based; 0 = end): [rows, n + 1], True = closed."""
    mask = mask.clone()
    mask[rows, chosen] = True
    if m + 1 == n:  # every point chosen: the first closes the tour
        mask[rows, first] = False
    if m + 1 == n + 1:  # closed: only the end
        mask[:, 1:] = True
        mask[:, 0] = False
    return mask


def nn_tours(x):
    out = []
    for p in x:
        left = list(range(1, n))
        t = [0]
        while left:
            d = [float(((p[t[-1]] - p[k]) ** 2).sum()) for k in left]
            t.append(left.pop(min(range(len(left)), key=d.__getitem__)))
        out.append([k + 1 for k in t] + [1])
    return torch.tensor(out)


model = Ptr()
if task == "train":
    steps, threads = int(sys.argv[3]), int(sys.argv[4])
    x = torch.rand(B, n, 2)
    y = nn_tours(x)  # [B, n + 1], 1-based, closed
    target = torch.cat([y, torch.zeros(B, 1, dtype=torch.long)], 1)  # + the end
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    rows = torch.arange(B)

    def step():
        opt.zero_grad()
        xe, keys, h, c = model.encode(x)
        mask = torch.zeros(B, n + 1, dtype=torch.bool)
        mask[:, 0] = True
        inp = model.go.expand(B, E)
        loss = 0.0
        for m in range(n + 2):
            h, c = model.dec(inp, (h, c))
            s = model.scores(keys, h).masked_fill(mask, NEG)
            loss = loss + F.cross_entropy(s, target[:, m], reduction="sum")
            if m < n + 1:
                mask = mask_after(mask, target[:, m], target[:, 0], m, rows)
                inp = xe[rows, target[:, m] - 1]
        loss = loss / (B * (n + 2))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        opt.step()
        return float(loss)

    for _ in range(3):
        step()
    t0 = time.perf_counter()
    for _ in range(steps):
        last = step()
    sec = (time.perf_counter() - t0) / steps
    print(f"pytorch\ttrain\ttsp{n}\t{threads}\t{steps}\t{sec:.5f}\t{B / sec:.1f}\t{last:.4f}")
    sys.exit(0)

count, beam, threads = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
xs = torch.rand(count, n, 2)


@torch.no_grad()
def greedy(x):
    b = x.shape[0]
    rows = torch.arange(b)
    xe, keys, h, c = model.encode(x)
    mask = torch.zeros(b, n + 1, dtype=torch.bool)
    mask[:, 0] = True
    inp = model.go.expand(b, E)
    first = None
    out = []
    for m in range(n + 2):
        h, c = model.dec(inp, (h, c))
        j = model.scores(keys, h).masked_fill(mask, NEG).argmax(1)
        out.append(j)
        if m == 0:
            first = j
        if m < n + 1:
            mask = mask_after(mask, j, first, m, rows)
            inp = xe[rows, (j - 1).clamp(min=0)]
    return torch.stack(out, 1)


@torch.no_grad()
def beam_search(x, k):
    xe, keys1, h, c = model.encode(x[None])
    alive = [([], 0.0)]
    hs, cs = h, c
    finished = []
    for m in range(n + 2):
        r = len(alive)
        inp = torch.stack([model.go if not s else xe[0, s[-1] - 1] for s, _ in alive])
        hs, cs = model.dec(inp, (hs, cs))
        sc = model.scores(keys1.expand(r, -1, -1), hs)
        mask = torch.zeros(r, n + 1, dtype=torch.bool)
        for i, (s, _) in enumerate(alive):
            if len(s) == n + 1:
                mask[i, 1:] = True
            else:
                mask[i, 0] = True
                if s:
                    mask[i, torch.tensor(s)] = True
                    if len(s) == n:
                        mask[i, s[0]] = False
        lp = F.log_softmax(sc.masked_fill(mask, NEG), 1)
        total = lp + torch.tensor([p for _, p in alive])[:, None]
        top = total.flatten().topk(min(k, total.numel()))
        nxt, rows = [], []
        for val, idx in zip(top.values.tolist(), top.indices.tolist()):
            i, j = divmod(idx, n + 1)
            if j == 0:
                finished.append((alive[i][0], val))
            else:
                nxt.append((alive[i][0] + [j], val))
                rows.append(i)
        if len(finished) >= k or not nxt:
            break
        alive = nxt
        hs, cs = hs[rows], cs[rows]
    return max(finished or alive, key=lambda t: t[1])[0]


greedy(xs[:2])
t0 = time.perf_counter()
if beam == 1:
    for i in range(0, count, 64):
        greedy(xs[i:i + 64])
else:
    for i in range(count):
        beam_search(xs[i], beam)
sec = time.perf_counter() - t0
print(f"pytorch\tdecode\ttsp{n}\t{threads}\t{count}\t{sec:.4f}\t{count / sec:.1f}\t{beam}")
