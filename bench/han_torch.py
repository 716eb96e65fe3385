"""The PyTorch peer of bench/han.cpp: the same Hierarchical Attention Network (embedding 200,
bidirectional GRUs of 50, context vectors 100, vocabulary 8,000, 2 classes, dropout 0.5 on
the embeddings, the sentence vectors and the document vector), float32 on the CPU, written as
public PyTorch HANs are: each batch's sentences padded and packed (pack_padded_sequence) for
the word GRU, the sentence vectors padded and packed for the sentence GRU, masked softmax
attention. 1,024 random documents of 2-12 sentences of 3-30 words; training: batches of 64
documents of similar length (sorted in pools of 16 batches), Adam 1e-3, clipping at 5;
inference: batches of 64 in eval mode without gradients.
The batches' tensors are made before timing.
   han_torch.py train|infer [STEPS|REPS] [THREADS] → impl mode threads items sec items_per_s cpu_sec items_per_cpu_s
(cpu_sec: the process's CPU time, all threads)"""
import sys
import time

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

mode = sys.argv[1] if len(sys.argv) > 1 else "train"
n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
torch.set_num_threads(threads)
torch.manual_seed(1)
V, E, H, A, C, N, B, P = 8000, 200, 50, 100, 2, 1024, 64, 0.5


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(2 * H, A)
        self.ctx = nn.Parameter(torch.empty(A).uniform_(-A ** -0.5, A ** -0.5))

    def forward(self, h, mask):  # h [N, T, 2H], mask [N, T] bool
        s = torch.tanh(self.proj(h)) @ self.ctx
        a = torch.softmax(s.masked_fill(~mask, float("-inf")), -1)
        return torch.bmm(a.unsqueeze(1), h).squeeze(1)


class HAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, E)
        nn.init.normal_(self.embed.weight, 0.0, 0.1)
        self.word_gru = nn.GRU(E, H, batch_first=True, bidirectional=True)
        self.sent_gru = nn.GRU(2 * H, H, batch_first=True, bidirectional=True)
        self.word_att, self.sent_att = Attention(), Attention()
        self.out = nn.Linear(2 * H, C)
        self.drop = nn.Dropout(P)

    def forward(self, words, wlen, slen):
        # words [sentences of the batch, longest], wlen [sentences], slen [documents]
        x = self.drop(self.embed(words))
        h, _ = self.word_gru(pack_padded_sequence(x, wlen, batch_first=True, enforce_sorted=False))
        h, _ = pad_packed_sequence(h, batch_first=True)
        mask = torch.arange(h.shape[1]).unsqueeze(0) < wlen.unsqueeze(1)
        sv = self.word_att(h, mask)
        sv = pad_sequence(torch.split(sv, slen.tolist()), batch_first=True)
        sv = self.drop(sv)
        hs, _ = self.sent_gru(pack_padded_sequence(sv, slen, batch_first=True, enforce_sorted=False))
        hs, _ = pad_packed_sequence(hs, batch_first=True)
        smask = torch.arange(hs.shape[1]).unsqueeze(0) < slen.unsqueeze(1)
        return self.out(self.drop(self.sent_att(hs, smask)))


g = torch.Generator().manual_seed(2)
docs = []
for i in range(N):
    s = int(torch.randint(2, 13, (1,), generator=g))
    docs.append([torch.randint(0, V, (int(torch.randint(3, 31, (1,), generator=g)),), generator=g)
                 for _ in range(s)])
labels = torch.tensor([i % 2 for i in range(N)])


def tensors(idx):
    sents = [w for i in idx for w in docs[i]]
    return (pad_sequence(sents, batch_first=True), torch.tensor([len(w) for w in sents]),
            torch.tensor([len(docs[i]) for i in idx]), labels[idx])


def train_batches(epoch):
    order = torch.randperm(N, generator=torch.Generator().manual_seed(epoch)).tolist()
    out = []
    for p0 in range(0, N, 16 * B):
        pool = sorted(order[p0:p0 + 16 * B], key=lambda i: len(docs[i]))
        out += [pool[b:b + B] for b in range(0, len(pool), B)]
    perm = torch.randperm(len(out), generator=torch.Generator().manual_seed(epoch + 99)).tolist()
    return [out[k] for k in perm]


model = HAN()
# The batches' tensors are made before the clock starts (the peer's best case: attnkit's
# timings include making its batches).
if mode == "train":
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    prepared = []
    epoch = 0
    while len(prepared) < n + 3:
        prepared += [tensors(b) for b in train_batches(epoch)]
        epoch += 1

    def step(k):
        words, wlen, slen, y = prepared[k]
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(words, wlen, slen), y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        return len(slen)

    for k in range(3):
        step(k)
    items = 0
    t0, c0 = time.perf_counter(), time.process_time()
    for k in range(n):
        items += step(3 + k)
    sec, cpu = time.perf_counter() - t0, time.process_time() - c0
else:
    model.eval()
    prepared = [tensors(list(range(b, min(N, b + B)))) for b in range(0, N, B)]

    def infer():
        with torch.no_grad():
            for words, wlen, slen, _ in prepared:
                torch.softmax(model(words, wlen, slen), -1)
        return N

    infer()
    items = 0
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(n):
        items += infer()
    sec, cpu = time.perf_counter() - t0, time.process_time() - c0
print(f"pytorch\t{mode}\t{threads}\t{items}\t{sec:.3f}\t{items / sec:.1f}\t{cpu:.3f}\t{items / cpu:.1f}")
