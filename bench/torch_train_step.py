"""The PyTorch peer of bench/train_step.cpp: one training step of the same LSTM
encoder-decoder with additive attention (vocab 1000, emb 64, hidden 128, batch 64, length 20,
Adam, gradient clipping at 5), float32 on the CPU.
   torch_train_step.py [STEPS] [THREADS] → impl threads steps sec_per_step tokens_per_s loss"""
import sys
import time

import torch
from torch import nn

V, E, H, B, T = 1000, 64, 128, 64, 20
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
torch.set_num_threads(threads)
torch.manual_seed(1)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_emb = nn.Embedding(V, E)
        self.tgt_emb = nn.Embedding(V, E)
        self.enc = nn.LSTM(E, H, batch_first=True)
        self.dec = nn.LSTMCell(E + H, H)
        self.att_k = nn.Linear(H, H, bias=False)
        self.att_q = nn.Linear(H, H)
        self.att_v = nn.Linear(H, 1, bias=False)
        self.out = nn.Linear(2 * H, V)

    def forward(self, src, tgt_in, tgt_out):
        hs, (h, c) = self.enc(self.src_emb(src))        # [B, T, H]
        keys = self.att_k(hs)
        y = self.tgt_emb(tgt_in)                         # [T, B, E]
        h, c = h[0], c[0]
        feats = []
        for k in range(T):
            q = self.att_q(h).unsqueeze(1)
            scores = self.att_v(torch.tanh(keys + q)).view(B, 1, T)
            alpha = torch.softmax(scores, dim=-1)
            ctx = torch.bmm(alpha, hs).view(B, H)
            h, c = self.dec(torch.cat([y[k], ctx], -1), (h, c))
            feats.append(torch.cat([h, ctx], -1))
        logits = self.out(torch.stack(feats, 0))
        return nn.functional.cross_entropy(logits.view(-1, V), tgt_out.view(-1))


m = Model()
opt = torch.optim.Adam(m.parameters(), lr=1e-3)


def step():
    src = torch.randint(0, V, (B, T))
    tout = torch.randint(0, V, (T, B))
    tin = torch.cat([torch.zeros(1, B, dtype=torch.long), tout[:-1]], 0)
    opt.zero_grad()
    loss = m(src, tin, tout)
    loss.backward()
    nn.utils.clip_grad_norm_(m.parameters(), 5.0)
    opt.step()
    return loss.item()


for _ in range(3):
    step()
t0 = time.perf_counter()
for _ in range(steps):
    last = step()
sec = (time.perf_counter() - t0) / steps
print(f"pytorch\t{threads}\t{steps}\t{sec:.5f}\t{B * T / sec:.0f}\t{last:.4f}")
