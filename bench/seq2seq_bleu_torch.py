"""The PyTorch peer of pipelines/translate-fra.sh's models, for bench/seq2seq-bleu.sh: trains
the LSTM + Bahdanau encoder-decoder or the post-norm Transformer on the same training pairs,
with the same tokenisation (d2l's words, ported from lib/attnkit/data/text.cpp), the same
vocabularies (read from vocab-build's output), the same encoding (source + <eos>, <bos> target
<eos>, cut at --max-len keeping the final <eos>), the same length-grouped batching, Adam
(β 0.9, 0.98, ε 1e-9), warm-up / inverse-sqrt schedule, clipping and label smoothing, then
translates the held-out sources greedily and writes one line per source (tokens joined by
spaces, <unk> as is), as seq2seq-translate does.
   seq2seq_bleu_torch.py --model rnn|transformer --train PAIRS.tsv --src-vocab V --tgt-vocab V
       --test SRC.txt --out HYP.txt [--epochs N] [--steps N] [--threads N] [--seed S]
       [--save MODEL.pt] [--emb-init pytorch|attnkit] ...
--save writes the trained model's state_dict (torch.save) after training, for
bench/seq2seq_xcheck.py. --emb-init attnkit draws the Transformer's embeddings from N(0, 1/d)
as seq2seq-train does (PyTorch's default, N(0, 1), times sqrt(d) on the way in, makes the
embeddings 16x the positional encoding at d = 256).
Prints one progress line per epoch to stderr and the training time to stdout."""
import argparse
import math
import random
import sys
import time

import torch
from torch import nn

PAD, BOS, EOS, UNK = 0, 1, 2, 3


def lower_code_point(c):
    """lib/attnkit/data/text.cpp's lower_code_point, code point by code point."""
    if c < 0x80:
        return c + 32 if 0x41 <= c <= 0x5A else c
    if 0xC0 <= c <= 0xDE and c != 0xD7:
        return c + 32
    if c == 0x130:
        return ord("i")
    if c == 0x178:
        return 0xFF
    if 0x100 <= c <= 0x137 or 0x14A <= c <= 0x177:
        return c + 1 if c % 2 == 0 else c
    if 0x139 <= c <= 0x148 or 0x179 <= c <= 0x17E:
        return c + 1 if c % 2 == 1 else c
    if 0x391 <= c <= 0x3A9 and c != 0x3A2:
        return c + 32
    if 0x410 <= c <= 0x42F:
        return c + 32
    if 0x400 <= c <= 0x40F:
        return c + 80
    return c


def tokenize(text):
    cps = [0x20 if ord(ch) in (0x202F, 0xA0) else lower_code_point(ord(ch)) for ch in text]
    out = []
    for i, c in enumerate(cps):
        if i > 0 and chr(c) in ",.!?" and cps[i - 1] != 0x20:
            out.append(" ")
        out.append(chr(c))
    return [w for w in "".join(out).split(" ") if w]


def read_vocab(path):
    toks = [line.rstrip("\n").split("\t")[0] for line in open(path, encoding="utf-8")]
    return toks, {t: i for i, t in enumerate(toks)}


def encode(tokens, index, limit, bos):
    ids = [index.get(t, UNK) for t in tokens]
    room = limit - (2 if bos else 1) if limit > 0 else len(ids)
    ids = ids[:room] + [EOS]
    return [BOS] + ids if bos else ids


def batches(data, size, rng, pool_batches=20):
    """Shuffle, cut into pools of pool_batches x size, sort each pool by source length
    (longest first, then target length, then order), cut into batches, shuffle the batches."""
    order = list(range(len(data)))
    rng.shuffle(order)
    out = []
    pool = pool_batches * size
    for p in range(0, len(order), pool):
        chunk = sorted(order[p:p + pool], key=lambda i: (-len(data[i][0]), -len(data[i][1]), i))
        out += [chunk[k:k + size] for k in range(0, len(chunk), size)]
    rng.shuffle(out)
    return out


def pad(seqs):
    n = max(len(s) for s in seqs)
    return torch.tensor([s + [PAD] * (n - len(s)) for s in seqs], dtype=torch.long)


class RNN(nn.Module):
    """Embeddings, a multi-layer LSTM encoder (packed: final states at each true length), a
    decoder of LSTM cells whose first layer reads [embedding; context], additive attention
    with the top layer's previous state as the query (padded keys masked), the output layer
    over [h_t; c_t]. Dropout on embeddings, between layers and before the output layer."""

    def __init__(self, sv, tv, e, h, layers, p):
        super().__init__()
        self.h, self.p = h, p
        self.src_emb, self.tgt_emb = nn.Embedding(sv, e), nn.Embedding(tv, e)
        self.enc = nn.LSTM(e, h, layers, batch_first=True, dropout=p if layers > 1 else 0.0)
        self.dec = nn.ModuleList([nn.LSTMCell(e + h if l == 0 else h, h) for l in range(layers)])
        self.att_k = nn.Linear(h, h, bias=False)
        self.att_q = nn.Linear(h, h)
        self.att_v = nn.Parameter(torch.empty(h).uniform_(-1 / math.sqrt(h), 1 / math.sqrt(h)))
        self.out = nn.Linear(2 * h, tv)
        self.drop = nn.Dropout(p)

    def encode(self, src, lens):
        x = self.drop(self.src_emb(src))
        packed = nn.utils.rnn.pack_padded_sequence(x, lens, batch_first=True, enforce_sorted=False)
        hs, (h, c) = self.enc(packed)
        hs, _ = nn.utils.rnn.pad_packed_sequence(hs, batch_first=True, total_length=src.shape[1])
        mask = src != PAD
        return hs, self.att_k(hs), mask, [(h[l], c[l]) for l in range(h.shape[0])]

    def step(self, y, hs, keys, mask, state):
        q = self.att_q(state[-1][0]).unsqueeze(1)
        scores = torch.tanh(keys + q) @ self.att_v
        alpha = torch.softmax(scores.masked_fill(~mask, float("-inf")), -1)
        ctx = torch.bmm(alpha.unsqueeze(1), hs).squeeze(1)
        x = torch.cat([self.drop(self.tgt_emb(y)), ctx], -1)
        new = []
        for l, cell in enumerate(self.dec):
            hc = cell(x, state[l])
            new.append(hc)
            x = self.drop(hc[0]) if l + 1 < len(self.dec) else hc[0]
        return torch.cat([x, ctx], -1), new

    def logits(self, src, lens, tin):
        hs, keys, mask, state = self.encode(src, lens)
        feats = []
        for k in range(tin.shape[1]):
            f, state = self.step(tin[:, k], hs, keys, mask, state)
            feats.append(f)
        return self.out(self.drop(torch.stack(feats, 1)))

    @torch.no_grad()
    def greedy(self, src, lens, max_len):
        hs, keys, mask, state = self.encode(src, lens)
        y = torch.full((src.shape[0],), BOS, dtype=torch.long)
        out = []
        for _ in range(max_len):
            f, state = self.step(y, hs, keys, mask, state)
            y = self.out(f).argmax(-1)
            out.append(y)
        return torch.stack(out, 1)


def sinusoidal(n, d):
    p = torch.arange(n, dtype=torch.float64).unsqueeze(1)
    i = torch.arange(0, d, 2, dtype=torch.float64)
    a = p / torch.pow(10000.0, i / d)
    pe = torch.zeros(n, d, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)
    return pe.float()


class Transformer(nn.Module):
    """Post-norm encoder/decoder layers (ReLU feed-forward), embeddings x sqrt(d) plus the
    interleaved sinusoidal encoding, dropout after that, source padding masks, causal mask."""

    def __init__(self, sv, tv, d, heads, ff, layers, p, emb_init="pytorch"):
        super().__init__()
        self.d = d
        self.src_emb, self.tgt_emb = nn.Embedding(sv, d), nn.Embedding(tv, d)
        if emb_init == "attnkit":  # N(0, 1/d), as seq2seq-train: unit size after the x sqrt(d)
            for e in (self.src_emb, self.tgt_emb):
                nn.init.normal_(e.weight, 0.0, d ** -0.5)
        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, heads, ff, p, batch_first=True), layers,
                                         enable_nested_tensor=False)
        self.dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(d, heads, ff, p, batch_first=True), layers)
        self.out = nn.Linear(d, tv)
        self.drop = nn.Dropout(p)

    def embed(self, emb, x):
        return self.drop(emb(x) * math.sqrt(self.d) + sinusoidal(x.shape[1], self.d))

    def encode(self, src):
        pad_mask = src == PAD
        return self.enc(self.embed(self.src_emb, src), src_key_padding_mask=pad_mask), pad_mask

    def decode(self, tin, mem, pad_mask):
        n = tin.shape[1]
        causal = torch.triu(torch.full((n, n), float("-inf")), 1)
        return self.out(self.dec(self.embed(self.tgt_emb, tin), mem, tgt_mask=causal,
                                 memory_key_padding_mask=pad_mask))

    def logits(self, src, lens, tin):
        mem, pad_mask = self.encode(src)
        return self.decode(tin, mem, pad_mask)

    @torch.no_grad()
    def greedy(self, src, lens, max_len):
        mem, pad_mask = self.encode(src)
        prefix = torch.full((src.shape[0], 1), BOS, dtype=torch.long)
        for _ in range(max_len):
            y = self.decode(prefix, mem, pad_mask)[:, -1].argmax(-1)
            prefix = torch.cat([prefix, y.unsqueeze(1)], 1)
        return prefix[:, 1:]


def greedy_all(m, srcs, ttoks, max_length):
    """Greedy translations of encoded sources (batches of 64, longest first), as text lines."""
    hyps = [None] * len(srcs)
    order = sorted(range(len(srcs)), key=lambda i: -len(srcs[i]))
    for k in range(0, len(order), 64):
        rows = order[k:k + 64]
        src = pad([srcs[i] for i in rows])
        lens = torch.tensor([len(srcs[i]) for i in rows])
        out = m.greedy(src, lens, max_length).tolist()
        for i, ids in zip(rows, out):
            words = []
            for t in ids:
                if t == EOS:
                    break
                words.append(ttoks[t])
            hyps[i] = " ".join(words)
    return hyps


def lr_factor(s, warmup, schedule):
    """nn::Schedule::factor: the learning rate's factor at step s (1-based)."""
    if warmup > 0 and s < warmup:
        return s / warmup
    if schedule == "inverse-sqrt":
        return math.sqrt(warmup / s) if warmup > 0 else 1 / math.sqrt(s)
    return 1.0


def make_optimizer(params, lr, warmup, schedule):
    """Adam (β 0.9/0.98, ε 1e-9) and the rate's schedule (lr_factor), as seq2seq-train's."""
    opt = torch.optim.Adam(params, lr=lr, betas=(0.9, 0.98), eps=1e-9)
    return opt, torch.optim.lr_scheduler.LambdaLR(opt, lambda e: lr_factor(e + 1, warmup, schedule))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=["rnn", "transformer"], required=True)
    ap.add_argument("--train", required=True)
    ap.add_argument("--src-vocab", required=True)
    ap.add_argument("--tgt-vocab", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--max-len", type=int, default=20)
    ap.add_argument("--max-length", type=int, default=50, help="decoding: tokens emitted, <eos> included")
    ap.add_argument("--embed", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--d-model", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--d-ff", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--dropout", type=float, default=0.2)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=0)
    ap.add_argument("--schedule", choices=["constant", "inverse-sqrt"], default="constant")
    ap.add_argument("--label-smoothing", type=float, default=0.0)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--emb-init", choices=["pytorch", "attnkit"], default="pytorch",
                    help="Transformer embeddings: PyTorch's N(0, 1) (default) or seq2seq-train's N(0, 1/d)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--save", help="write the trained model's state_dict here (torch.save)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)

    stoks, sidx = read_vocab(a.src_vocab)
    ttoks, tidx = read_vocab(a.tgt_vocab)
    data = []
    for line in open(a.train, encoding="utf-8"):
        cols = line.rstrip("\n").rstrip("\r").split("\t")
        data.append((encode(tokenize(cols[0]), sidx, a.max_len, False),
                     encode(tokenize(cols[1]), tidx, a.max_len, True)))
    if a.model == "rnn":
        m = RNN(len(stoks), len(ttoks), a.embed, a.hidden, a.layers, a.dropout)
    else:
        m = Transformer(len(stoks), len(ttoks), a.d_model, a.heads, a.d_ff, a.layers, a.dropout, a.emb_init)
    opt, sched = make_optimizer(m.parameters(), a.lr, a.warmup, a.schedule)
    n_batches = (len(data) + a.batch_size - 1) // a.batch_size
    total = a.steps if a.steps > 0 else a.epochs * n_batches
    step, epoch, t0 = 0, 0, time.perf_counter()
    m.train()
    while step < total:
        loss_sum, tok_sum = 0.0, 0
        for rows in batches(data, a.batch_size, rng):
            if step >= total:
                break
            src = pad([data[i][0] for i in rows])
            lens = torch.tensor([len(data[i][0]) for i in rows])
            tgt = pad([data[i][1] for i in rows])
            tin, tout = tgt[:, :-1], tgt[:, 1:]
            logits = m.logits(src, lens, tin)
            loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tout.reshape(-1),
                                               ignore_index=PAD, label_smoothing=a.label_smoothing)
            opt.zero_grad()
            loss.backward()
            if a.clip > 0:
                nn.utils.clip_grad_norm_(m.parameters(), a.clip)
            opt.step()
            sched.step()
            step += 1
            k = int((tout != PAD).sum())
            loss_sum += loss.item() * k
            tok_sum += k
        epoch += 1
        print(f"seq2seq_bleu_torch {a.model}: epoch {epoch}, step {step}/{total}, loss {loss_sum / max(tok_sum, 1):.4f}, "
              f"{time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    train_sec = time.perf_counter() - t0
    if a.save:
        torch.save(m.state_dict(), a.save)

    m.eval()
    lines = [line.rstrip("\n").rstrip("\r") for line in open(a.test, encoding="utf-8")]
    srcs = [encode(tokenize(l), sidx, 0, False) for l in lines]
    hyps = greedy_all(m, srcs, ttoks, a.max_length)
    with open(a.out, "w", encoding="utf-8") as f:
        for h in hyps:
            f.write(h + "\n")
    print(f"pytorch\t{a.model}\tepochs {a.epochs if a.steps == 0 else 'steps ' + str(a.steps)}\t"
          f"train {train_sec:.0f} s\tsteps {step}")


if __name__ == "__main__":
    main()
