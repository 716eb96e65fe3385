"""The PyTorch peer of bench/seq2seq.cpp: the same two models, data shapes, optimiser and
decoding algorithm, float32 on the CPU.
   seq2seq_torch.py train rnn|transformer STEPS THREADS
     → pytorch train MODEL threads steps sec_per_step tgt_tokens_per_s loss
   seq2seq_torch.py decode rnn|transformer BEAM SENTENCES THREADS
     → pytorch decode MODEL threads sentences sec sentences_per_s beam
   seq2seq_torch.py ddp rnn|transformer STEPS PROCS THREADS
     → pytorch-ddp train MODEL procs*threads steps sec_per_step tgt_tokens_per_s loss
     (DistributedDataParallel over PROCS processes with the gloo backend on 127.0.0.1, each
     process B/PROCS rows of every global batch of B, THREADS torch threads each)
RNN: LSTM encoder, LSTM decoder cell reading [embedding; context], additive attention with
the previous state as query, output layer over [h; context] (as lib/attnkit/models).
Transformer: post-norm nn.TransformerEncoder/DecoderLayer x2, d_model 128, 4 heads, d_ff
512, embeddings x sqrt(d) + sinusoidal positions, dropout 0 (the environment's DROPOUT if set:
the layers' own dropout and one on the embeddings, as attnkit places it). Decoding: one sentence at a
time, exactly 20 tokens (no <eos>), beam rows as the batch; the Transformer re-reads its
prefix each step, as attnkit does."""
import math
import os
import sys
import time

import torch
from torch import nn

V, E, H, B, T = 1000, 64, 128, 64, 20
D, HEADS, FF = 128, 4, 512
P = float(os.environ.get("DROPOUT", "0"))
task, kind = sys.argv[1], sys.argv[2]
# Tokens a decoded sentence emits (bench/decode-length.sh varies it; default T).
DECODE_LEN = int(os.environ.get("DECODE_LEN", "0")) or T
torch.manual_seed(1)


class RNN(nn.Module):
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

    def encode(self, src):
        hs, (h, c) = self.enc(self.src_emb(src))
        return hs, self.att_k(hs), (h[0], c[0])

    def step(self, y, hs, keys, state):
        h, c = state
        q = self.att_q(h).unsqueeze(1)
        alpha = torch.softmax(self.att_v(torch.tanh(keys + q)).squeeze(-1), -1)
        ctx = torch.bmm(alpha.unsqueeze(1), hs).squeeze(1)
        h, c = self.dec(torch.cat([self.tgt_emb(y), ctx], -1), (h, c))
        return torch.cat([h, ctx], -1), (h, c)

    def loss(self, src, tin, tout):
        hs, keys, state = self.encode(src)
        feats = []
        for k in range(tin.shape[1]):
            f, state = self.step(tin[:, k], hs, keys, state)
            feats.append(f)
        logits = self.out(torch.stack(feats, 1))
        return nn.functional.cross_entropy(logits.reshape(-1, V), tout.reshape(-1), ignore_index=0)


def sinusoidal(n, d):
    p = torch.arange(n, dtype=torch.float64).unsqueeze(1)
    i = torch.arange(0, d, 2, dtype=torch.float64)
    a = p / torch.pow(10000.0, i / d)
    pe = torch.zeros(n, d, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)
    return pe.float()


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_emb = nn.Embedding(V, D)
        self.tgt_emb = nn.Embedding(V, D)
        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, HEADS, FF, P, batch_first=True), 2,
                                         enable_nested_tensor=False)
        self.dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(D, HEADS, FF, P, batch_first=True), 2)
        self.out = nn.Linear(D, V)
        self.drop = nn.Dropout(P)

    def embed(self, emb, x):
        return self.drop(emb(x) * math.sqrt(D) + sinusoidal(x.shape[1], D))

    def encode(self, src):
        return self.enc(self.embed(self.src_emb, src))

    def decode(self, tin, mem):
        n = tin.shape[1]
        causal = torch.triu(torch.full((n, n), float("-inf")), 1)
        return self.out(self.dec(self.embed(self.tgt_emb, tin), mem, tgt_mask=causal))

    def loss(self, src, tin, tout):
        logits = self.decode(tin, self.encode(src))
        return nn.functional.cross_entropy(logits.reshape(-1, V), tout.reshape(-1), ignore_index=0)


def batch():
    src = torch.randint(4, V, (B, T))
    src[:, -1] = 2
    tgt = torch.randint(4, V, (B, T + 1))
    tgt[:, 0], tgt[:, -1] = 1, 2
    return src, tgt[:, :-1], tgt[:, 1:]


def decode(m, src, beam):
    """Beam search (beam 1 = greedy) emitting exactly T tokens (<eos> excluded)."""
    with torch.no_grad():
        if kind == "rnn":
            hs, keys, state = m.encode(src.unsqueeze(0))
        else:
            mem = m.encode(src.unsqueeze(0))
        scores = torch.zeros(1)
        prefix = torch.ones(1, 1, dtype=torch.long)
        for _ in range(DECODE_LEN):
            k = prefix.shape[0]
            if kind == "rnn":
                f, state = m.step(prefix[:, -1], hs.expand(k, -1, -1), keys.expand(k, -1, -1), state)
                logp = torch.log_softmax(m.out(f), -1)
            else:
                logp = torch.log_softmax(m.decode(prefix, mem.expand(k, -1, -1))[:, -1], -1)
            logp[:, :3] = float("-inf")
            cand = (scores.unsqueeze(1) + logp).view(-1)
            scores, idx = cand.topk(beam if k * V >= beam else k * V)
            rows, toks = idx // V, idx % V
            prefix = torch.cat([prefix[rows], toks.unsqueeze(1)], 1)
            if kind == "rnn":
                state = (state[0][rows], state[1][rows])
        return prefix[0, 1:]


def train_loop(m, opt, steps, rows, reduce_loss=None):
    def step():
        src, tin, tout = batch()
        src, tin, tout = src[:rows], tin[:rows], tout[:rows]
        opt.zero_grad()
        loss = m.loss(src, tin, tout) if not hasattr(m, "module") else m(src, tin, tout)
        loss.backward()
        nn.utils.clip_grad_norm_(m.parameters(), 5.0)
        opt.step()
        return loss.item()

    for _ in range(3):
        step()
    t0 = time.perf_counter()
    for _ in range(steps):
        last = step()
    return (time.perf_counter() - t0) / steps, last


class Wrapped(nn.Module):
    """DDP calls forward(): the model's loss."""
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, src, tin, tout):
        return self.inner.loss(src, tin, tout)


def ddp_worker(rank, procs, steps, threads, port):
    import torch.distributed as dist
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=procs)
    torch.set_num_threads(threads)
    torch.manual_seed(1)  # the same initial model on every rank (DDP also broadcasts it)
    inner = RNN() if kind == "rnn" else Transformer()
    m = nn.parallel.DistributedDataParallel(Wrapped(inner))
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    torch.manual_seed(100 + rank)  # each rank its own rows of the global batch
    sec, last = train_loop(m, opt, steps, B // procs)
    if rank == 0:
        print(f"pytorch-ddp\ttrain\t{kind}\t{procs * threads}\t{steps}\t{sec:.5f}\t{B * T / sec:.0f}\t{last:.4f}",
              flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":  # (the DDP workers import this file again)
    if task == "train":
        steps, threads = int(sys.argv[3]), int(sys.argv[4])
        torch.set_num_threads(threads)
        m = RNN() if kind == "rnn" else Transformer()
        opt = torch.optim.Adam(m.parameters(), lr=1e-3)
        sec, last = train_loop(m, opt, steps, B)
        print(f"pytorch\ttrain\t{kind}\t{threads}\t{steps}\t{sec:.5f}\t{B * T / sec:.0f}\t{last:.4f}")
    elif task == "ddp":
        import random
        import torch.multiprocessing as mp
        steps, procs, threads = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
        mp.spawn(ddp_worker, args=(procs, steps, threads, random.randint(20000, 60000)), nprocs=procs)
    else:
        beam, n, threads = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
        torch.set_num_threads(threads)
        m = (RNN() if kind == "rnn" else Transformer()).eval()
        srcs = torch.randint(4, V, (n, T))
        srcs[:, -1] = 2
        decode(m, srcs[0], beam)
        t0 = time.perf_counter()
        for i in range(n):
            assert decode(m, srcs[i], beam).shape[0] == DECODE_LEN
        sec = time.perf_counter() - t0
        print(f"pytorch\tdecode\t{kind}\t{threads}\t{n}\t{sec:.4f}\t{n / sec:.1f}\t{beam}")
