"""The PyTorch peer of bench/caption.cpp: the same Show, Attend and Tell model (Xu et al.
2015, soft attention), data shapes, loss and optimiser, float32 on the CPU.
   caption_torch.py STEPS THREADS -> pytorch train caption threads steps sec images_per_s loss
Model: CNN of 3 blocks (conv 3x3 padding 1 without bias, batch norm, ReLU, 2x2 max pool;
16, 32, 64 channels) on 64 images 56x56 -> 7x7 regions of 64; LSTM decoder (128 units)
from tanh(f_init(mean region)); additive attention (64) over the regions, the gate
sigmoid(f_beta(h)), the deep output layer (embed 64), vocabulary 20; captions of 5 to 11
words teacher-forced; the loss: cross-entropy summed over words and ends plus
sum_i (1 - sum_t alpha_ti)^2 over images, divided by the tokens; Adam 1e-3, gradients
clipped at norm 5. attnkit cuts the batch into 4 slices (each normalised by its own batch
statistics); here the whole batch is one (the same work)."""
import sys
import time

import torch
from torch import nn
import torch.nn.functional as F

steps, threads = int(sys.argv[1]), int(sys.argv[2])
torch.set_num_threads(threads)
torch.manual_seed(1)
B, E, H, A, V, C = 64, 64, 128, 64, 20, 64
D = C + 2  # the regions carry their (y, x) centre on the grid (caption-train's default)


class Cap(nn.Module):
    def __init__(self):
        super().__init__()
        layers, cin = [], 1
        for c in (16, 32, 64):
            layers += [nn.Conv2d(cin, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                       nn.MaxPool2d(2)]
            cin = c
        self.cnn = nn.Sequential(*layers)
        self.init_h, self.init_c = nn.Linear(D, H), nn.Linear(D, H)
        self.embed = nn.Embedding(V, E)
        self.W_a = nn.Linear(D, A, bias=False)
        self.W_h = nn.Linear(H, A)
        self.v = nn.Parameter(torch.rand(A) / A ** 0.5)
        self.f_beta = nn.Linear(H, 1)
        self.lstm = nn.LSTMCell(E + D, H)
        self.L_h, self.L_z = nn.Linear(H, E), nn.Linear(D, E, bias=False)
        self.L_o = nn.Linear(E, V)

    def forward(self, x, inp, tgt, live):
        f = self.cnn(x[:, None])
        gh, gw = f.shape[2], f.shape[3]
        ys = (2 * torch.arange(gh, dtype=f.dtype) + 1) / gh - 1
        xs = (2 * torch.arange(gw, dtype=f.dtype) + 1) / gw - 1
        grid = torch.stack(torch.meshgrid(ys, xs, indexing="ij"), -1).reshape(1, gh * gw, 2)
        a = torch.cat([f.flatten(2).transpose(1, 2), grid.expand(f.shape[0], -1, -1)], 2)  # [B, L, D]
        mean = a.mean(1)
        h, c = torch.tanh(self.init_h(mean)), torch.tanh(self.init_c(mean))
        keys = self.W_a(a)
        logits, cover = [], 0
        for t in range(inp.shape[1]):
            ey = self.embed(inp[:, t])
            al = torch.softmax(torch.tanh(keys + self.W_h(h)[:, None]) @ self.v, 1)
            z = torch.sigmoid(self.f_beta(h)) * torch.bmm(al[:, None], a)[:, 0]
            h, c = self.lstm(torch.cat([ey, z], 1), (h, c))
            logits.append(self.L_o(ey + self.L_h(h) + self.L_z(z)))
            cover = cover + al * live[:, t:t + 1]
        lg = torch.stack(logits, 1).reshape(-1, V)
        nll = F.cross_entropy(lg, tgt.reshape(-1), ignore_index=-1, reduction="sum")
        reg = ((1 - cover) ** 2).sum()
        return (nll + reg) / live.sum()


lens = [5 + i % 7 for i in range(B)]
T = max(lens) + 1
inp = torch.zeros(B, T, dtype=torch.long)
tgt = -torch.ones(B, T, dtype=torch.long)
live = torch.zeros(B, T)
for i, n in enumerate(lens):
    words = [4 + (i + 3 * j) % 16 for j in range(n)]
    inp[i, 0] = 1
    inp[i, 1:n + 1] = torch.tensor(words)
    tgt[i, :n] = torch.tensor(words)
    tgt[i, n] = 2
    live[i, :n + 1] = 1
x = torch.rand(B, 56, 56)
m = Cap()
opt = torch.optim.Adam(m.parameters(), 1e-3)


def step():
    opt.zero_grad()
    loss = m(x, inp, tgt, live)
    loss.backward()
    nn.utils.clip_grad_norm_(m.parameters(), 5.0)
    opt.step()
    return loss.item()


for _ in range(2):
    step()
t0 = time.perf_counter()
for _ in range(steps):
    last = step()
sec = (time.perf_counter() - t0) / steps
print(f"pytorch\ttrain\tcaption\t{threads}\t{steps}\t{sec:.5f}\t{B / sec:.1f}\t{last:.4f}")
