#!/usr/bin/python3
"""The d2l recipe of BERT pretraining (Dive into Deep Learning 15.8-15.10) written out in
PyTorch, independently of attnkit, and run on a text file in bert-pretrain's format (one
sentence a line, blank lines between documents): the peer of pipelines/bert-tiny.sh's first
claim, measured in the same run.

  bert_d2l_torch.py TEXT [--steps 50] [--batch 512] [--lr 0.01] [--seed 1] [--threads N]

d2l's model as its book writes it: token, segment and learned position embeddings (summed, no
layer norm), 2 post-norm encoder blocks (hidden 128, 2 heads, FFN 256 with ReLU, dropout 0.2),
the MLM head Linear-ReLU-LayerNorm-Linear over the vocabulary (its own weights), the NSP head
Linear-tanh on [CLS] then Linear(2); loss = mean cross-entropy over the masked tokens + mean
cross-entropy over the pairs; Adam, lr 0.01; PyTorch's default initialisation. The data as
d2l makes it: words as bert-pretrain splits them (lowercase, a space before , . ! ?), a
vocabulary of the words seen >= 5 times, sentence pairs (half the next sentence, half a
random sentence of another document) up to 64 tokens with [CLS]/[SEP], 15% of the ordinary
tokens chosen for prediction (80% [MASK], 10% a random word, 10% kept).

Prints, as key<TAB>value lines: the vocabulary size, ln|V|, the unigram entropy of the
masked words (what a model that ignores the context can reach), and the MLM loss averaged
over the run's steps (the figure d2l prints: 5.885 against ln 20256 = 9.916 on WikiText-2),
with the last 10 steps' mean."""
import argparse
import math
import random
import re
import sys
from collections import Counter

import torch
from torch import nn


def words(line):
    line = re.sub(r"(?<! )([,.!?])", r" \1", line.strip().lower())
    return line.split()


def read_docs(path):
    docs, cur = [], []
    for line in open(path, encoding="utf-8"):
        w = words(line)
        if not w:
            if cur:
                docs.append(cur)
            cur = []
        else:
            cur.append(w)
    if cur:
        docs.append(cur)
    return docs


class BERT(nn.Module):
    def __init__(self, V, D=128, H=2, FF=256, L=2, max_len=64, dropout=0.2):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.seg = nn.Embedding(2, D)
        self.pos = nn.Parameter(torch.randn(1, max_len, D))
        layer = nn.TransformerEncoderLayer(D, H, FF, dropout, activation="relu", batch_first=True)
        self.enc = nn.TransformerEncoder(layer, L)
        self.mlm = nn.Sequential(nn.Linear(D, D), nn.ReLU(), nn.LayerNorm(D), nn.Linear(D, V))
        self.nsp_hidden = nn.Sequential(nn.Linear(D, D), nn.Tanh())
        self.nsp = nn.Linear(D, 2)

    def forward(self, tok, seg, pad, pred_pos):
        x = self.tok(tok) + self.seg(seg) + self.pos[:, : tok.shape[1]]
        x = self.enc(x, src_key_padding_mask=pad)
        b = torch.arange(tok.shape[0]).repeat_interleave(pred_pos.shape[1])
        h = x[b, pred_pos.reshape(-1)].reshape(tok.shape[0], pred_pos.shape[1], -1)
        return self.mlm(h), self.nsp(self.nsp_hidden(x[:, 0]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("text")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    rng = random.Random(a.seed)
    docs = read_docs(a.text)
    counts = Counter(w for d in docs for s in d for w in s)
    itos = ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"]
    itos += sorted((w for w, n in counts.items() if n >= 5), key=lambda w: (-counts[w], w))
    stoi = {w: i for i, w in enumerate(itos)}
    PAD, UNK, CLS, SEP, MASK, FIRST = 0, 1, 2, 3, 4, 5
    V = len(itos)
    enc = [[[stoi.get(w, UNK) for w in s] for s in d] for d in docs]
    items = [(d, s) for d in range(len(enc)) for s in range(len(enc[d]) - 1)]
    max_len, npred = 64, 10

    def example():
        d, s = items[rng.randrange(len(items))]
        first = enc[d][s]
        if rng.random() < 0.5:
            second, nxt = enc[d][s + 1], 1
        else:
            d2 = rng.randrange(len(enc) - 1)
            d2 += d2 >= d
            second, nxt = enc[d2][rng.randrange(len(enc[d2]))], 0
        toks = ([CLS] + first + [SEP] + second + [SEP])[:max_len]
        seg = ([0] * (len(first) + 2) + [1] * (len(second) + 1))[:max_len]
        cand = [i for i, t in enumerate(toks) if t not in (CLS, SEP)]
        k = min(npred, max(1, round(len(cand) * 0.15)))
        chosen = sorted(rng.sample(cand, k))
        labels = [toks[i] for i in chosen]
        for i in chosen:
            u = rng.random()
            if u < 0.8:
                toks[i] = MASK
            elif u < 0.9:
                toks[i] = rng.randrange(FIRST, V)
        return toks, seg, chosen, labels, nxt

    # The unigram entropy of the words chosen for prediction (over 20,000 examples).
    lab = Counter()
    for _ in range(20000):
        lab.update(example()[3])
    tot = sum(lab.values())
    unigram = -sum(n / tot * math.log(n / tot) for n in lab.values())

    model = BERT(V)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    losses = []
    for step in range(a.steps):
        batch = [example() for _ in range(a.batch)]
        T = max(len(b[0]) for b in batch)
        tok = torch.full((a.batch, T), PAD, dtype=torch.long)
        seg = torch.zeros((a.batch, T), dtype=torch.long)
        pos = torch.zeros((a.batch, npred), dtype=torch.long)
        lab_t = torch.zeros((a.batch, npred), dtype=torch.long)
        w = torch.zeros((a.batch, npred))
        nsp = torch.tensor([b[4] for b in batch])
        for i, (t, s, c, y, _) in enumerate(batch):
            tok[i, : len(t)] = torch.tensor(t)
            seg[i, : len(s)] = torch.tensor(s)
            pos[i, : len(c)] = torch.tensor(c)
            lab_t[i, : len(y)] = torch.tensor(y)
            w[i, : len(y)] = 1
        mlm_logits, nsp_logits = model(tok, seg, tok == PAD, pos)
        l = nn.functional.cross_entropy(mlm_logits.reshape(-1, V), lab_t.reshape(-1), reduction="none")
        mlm = (l * w.reshape(-1)).sum() / w.sum()
        loss = mlm + nn.functional.cross_entropy(nsp_logits, nsp)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(mlm.item())
        print(f"step {step + 1}: MLM loss {mlm.item():.3f}", file=sys.stderr)
    print(f"vocab\t{V}")
    print(f"ln_vocab\t{math.log(V):.3f}")
    print(f"unigram_entropy\t{unigram:.3f}")
    print(f"mean_mlm_loss\t{sum(losses) / len(losses):.3f}")
    print(f"last10_mlm_loss\t{sum(losses[-10:]) / len(losses[-10:]):.3f}")


if __name__ == "__main__":
    main()
