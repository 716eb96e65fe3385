"""The PyTorch peer of bench/ram.cpp: the same recurrent attention model (Mnih et al. 2014),
data shapes, losses and optimiser, float32 on the CPU.
   ram_torch.py STEPS THREADS [GLIMPSES]
     -> pytorch train ramT threads steps sec_per_step images_per_s loss
60 x 60 noise images, random labels of 10 classes, batch 64. Glimpse sensor: 3 patches of 12,
24, 48 pixels centred on l in [-1, 1]^2, cut from the zero-padded batch by one gather per
scale (vectorised over the batch; no Python loop over images) and average-pooled to 12 x 12.
Glimpse network h_g = relu(fc(patches)) 432->128, h_l = relu(fc(l)) 2->128,
g = relu(fc(h_g) + fc(h_l)) -> 256; core h = relu(fc(g) + fc(h)) 256; location mean
tanh(fc(h.detach())) 256->2 with a fixed std 0.1, samples clipped to [-1, 1]; baseline
fc(h.detach()) 256->1; action fc(h_T) 256->10. Loss: cross-entropy + REINFORCE
(-sum_t (R - b_t) log pi(l_t), mean over images) + mean (b - R)^2; Adam 1e-3, gradients
clipped at norm 5."""
import sys
import time

import torch
from torch import nn
import torch.nn.functional as F

steps, threads = int(sys.argv[1]), int(sys.argv[2])
T = int(sys.argv[3]) if len(sys.argv) > 3 else 6
B, HW, G, K, S = 64, 60, 12, 3, 2
HG, HID, STD = 128, 256, 0.1
torch.manual_seed(1)
SIDES = [G * S ** j for j in range(K)]
PAD = SIDES[-1]


def glimpse(padded, l):
    """padded [B, H + 2P, W + 2P]; l [B, 2] (x, y) -> [B, K * G * G]."""
    b = padded.shape[0]
    cx = (l[:, 0] + 1) * 0.5 * HW
    cy = (l[:, 1] + 1) * 0.5 * HW
    bi = torch.arange(b)[:, None, None]
    out = []
    for side in SIDES:
        top = torch.floor(cy - side / 2 + 0.5).long() + PAD
        left = torch.floor(cx - side / 2 + 0.5).long() + PAD
        ar = torch.arange(side)
        rows = (top[:, None] + ar)[:, :, None]
        cols = (left[:, None] + ar)[:, None, :]
        patch = padded[bi, rows, cols]
        out.append(F.avg_pool2d(patch[:, None], side // G).reshape(b, -1))
    return torch.cat(out, 1)


class Ram(nn.Module):
    def __init__(self):
        super().__init__()
        self.fg = nn.Linear(K * G * G, HG)
        self.fl = nn.Linear(2, HG)
        self.gg = nn.Linear(HG, HID)
        self.gl = nn.Linear(HG, HID)
        self.ci = nn.Linear(HID, HID)
        self.ch = nn.Linear(HID, HID)
        self.loc = nn.Linear(HID, 2)
        self.base = nn.Linear(HID, 1)
        self.act = nn.Linear(HID, 10)

    def forward(self, x, y):
        b = x.shape[0]
        padded = F.pad(x, (PAD, PAD, PAD, PAD))
        l = torch.rand(b, 2) * 2 - 1
        h = torch.zeros(b, HID)
        logps, bases = [], []
        for t in range(T):
            rho = glimpse(padded, l)
            g = F.relu(self.gg(F.relu(self.fg(rho))) + self.gl(F.relu(self.fl(l))))
            h = F.relu(self.ci(g) + self.ch(h))
            if t + 1 == T:
                break
            hd = h.detach()
            mu = torch.tanh(self.loc(hd))
            sample = (mu + STD * torch.randn_like(mu)).detach()
            logps.append(torch.distributions.Normal(mu, STD).log_prob(sample).sum(1))
            bases.append(self.base(hd).squeeze(1))
            l = sample.clamp(-1, 1)
        logits = self.act(h)
        ce = F.cross_entropy(logits, y)
        reward = (logits.argmax(1) == y).float()
        logp = torch.stack(logps, 1)
        base = torch.stack(bases, 1)
        adv = (reward[:, None] - base).detach()
        reinforce = -(adv * logp).sum(1).mean()
        mse = ((base - reward[:, None]) ** 2).mean()
        return ce + reinforce + mse


torch.set_num_threads(threads)
x = torch.rand(B, HW, HW)
y = torch.randint(0, 10, (B,))
m = Ram()
opt = torch.optim.Adam(m.parameters(), lr=1e-3)


def step():
    opt.zero_grad()
    loss = m(x, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(m.parameters(), 5.0)
    opt.step()
    return loss.item()


for _ in range(3):
    step()
t0 = time.perf_counter()
for _ in range(steps):
    last = step()
sec = (time.perf_counter() - t0) / steps
print(f"pytorch\ttrain\tram{T}\t{threads}\t{steps}\t{sec:.5f}\t{B / sec:.1f}\t{last:.4f}")
