"""The PyTorch peer of bench/stackmem.cpp: the same Stack-LSTM (Grefenstette et al. 2015, the
paper's form), data shapes, loss, optimiser and clipping, float32 on the CPU.
   stackmem_torch.py LEN STEPS THREADS
     -> pytorch train stack-lstm-revLEN threads steps sec_per_step sequences_per_s loss
Model: embedding 32, an LSTM cell of 64 units reading [x_t; r_{t-1}], a linear map of h to
the push d = sigmoid, the pop u = sigmoid (bias -1) and the value v = tanh (16 numbers), the
neural stack's update and read (its sums below and above each slot by cumulative sums), the
prediction softmax(W_y tanh(W_o h)). Reversal of LEN symbols of 10 (+4 reserved ids), batch
16: the source, a separator, the target teacher-forced; the cross-entropy of the target and
<eos> divided by their count; Adam 3e-3, gradients clipped at norm 5."""
import sys
import time

import torch
from torch import nn
import torch.nn.functional as F

E, H, W, V, B = 32, 64, 16, 14, 16
BOS, EOS = 2, 3
n, steps = int(sys.argv[1]), int(sys.argv[2])
torch.set_num_threads(int(sys.argv[3]))
torch.manual_seed(1)


class StackLstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, E)
        self.cell = nn.LSTMCell(E + W, H)
        self.ctrl = nn.Linear(H, 2 + W)
        with torch.no_grad():
            self.ctrl.bias[1] = -1.0
        self.out = nn.Linear(H, H)
        self.proj = nn.Linear(H, V)

    def forward(self, ids, targets):
        b, steps_ = ids.shape
        h = c = torch.zeros(b, H)
        r = torch.zeros(b, W)
        s = torch.zeros(b, 0)
        vals = torch.zeros(b, 0, W)
        x = self.emb(ids)
        loss, count = 0.0, 0
        for t in range(steps_):
            h, c = self.cell(torch.cat([x[:, t], r], 1), (h, c))
            o = self.ctrl(h)
            d, u, v = torch.sigmoid(o[:, :1]), torch.sigmoid(o[:, 1:2]), torch.tanh(o[:, 2:])
            if s.shape[1]:
                above = torch.flip(torch.cumsum(torch.flip(s, [1]), 1), [1]) - s
                s = torch.relu(s - torch.relu(u - above))
            s = torch.cat([s, d], 1)
            vals = torch.cat([vals, v[:, None]], 1)
            above = torch.flip(torch.cumsum(torch.flip(s, [1]), 1), [1]) - s
            w = torch.minimum(s, torch.relu(1 - above))
            r = (w[:, :, None] * vals).sum(1)
            y = targets[:, t]
            if (y >= 0).any():
                logits = self.proj(torch.tanh(self.out(h)))
                k = int((y >= 0).sum())
                loss = loss + F.cross_entropy(logits, y.clamp(min=0), reduction="none")[y >= 0].sum()
                count += k
        return loss / count


src = torch.randint(4, V, (B, n))
tgt = torch.flip(src, [1])
ids = torch.cat([src, torch.full((B, 1), BOS), tgt], 1)
targets = torch.cat([torch.full((B, n), -1), tgt, torch.full((B, 1), EOS)], 1)
model = StackLstm()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)


def step():
    opt.zero_grad()
    loss = model(ids, targets)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 5.0)
    opt.step()
    return loss.item()


for _ in range(3):
    step()
t0 = time.perf_counter()
for _ in range(steps):
    last = step()
sec = (time.perf_counter() - t0) / steps
print(f"pytorch\ttrain\tstack-lstm-rev{n}\t{sys.argv[3]}\t{steps}\t{sec:.5f}\t{B / sec:.1f}\t{last:.4f}")
