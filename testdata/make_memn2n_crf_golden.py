#!/usr/bin/python3
"""Golden file for the memory network with structured attention over its hops
(lib/attnkit/memory/memn2n/model.h, `attention` crf and unary; Kim et al. 2017 section 4.3):
a tiny model's answer loss and every hop's weights, computed independently in PyTorch
(float64) from the model's definition, with the hop chain's marginals by brute-force
enumeration of all M^K selections (not by a dynamic programme).

    /usr/bin/python3 testdata/make_memn2n_crf_golden.py    # writes testdata/memn2n/crf.txt

The model: V = 9, d = 4, K hops (2 and 3), memory M = 5 (temporal rows M + M/10 + 1 = 6),
position encoding of the authors' code (each sentence's own J) and temporal encoding,
adjacent tying (tables E0..EK, T0..TK). Weights: element i of the p-th table (E0..EK, then
T0..TK) is 0.25 sin(1.3 i + 0.7 p + 0.1), rounded to float32 (the test sets the same).
The batch: memn2n_test.cpp's toy batch, two questions with memories of 3 and 1 sentences
(slot 0 the latest sentence, age = slot), queries and answers below.

Lines: "<kind> K<k> loss L" (cross-entropy, mean over the 2 questions) and
"<kind> K<k> hop<h> q<b> w_0 .. w_{M-1}" (the batch's M = 3 slots), 17 digits.
"""
import itertools
import math
import os

import torch

torch.set_default_dtype(torch.float64)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "memn2n")
V, D, MEM = 9, 4, 5
TIME_ROWS = MEM + MEM // 10 + 1
# (memory, oldest first; query; answer)
QUESTIONS = [
    ([[4, 5, 6], [7, 5], [4, 8, 6]], [5, 4], 6),
    ([[7, 8]], [7], 8),
]


def weights(shape, p):
    n = shape[0] * shape[1]
    v = torch.tensor([0.25 * math.sin(1.3 * i + 0.7 * p + 0.1) for i in range(n)])
    return v.float().double().reshape(shape)


def pe_code(J, d):
    l = torch.zeros(J, d)
    for j in range(1, J + 1):
        for k in range(1, d + 1):
            l[j - 1, k - 1] = 1 + 4 * (k - (d + 1) / 2) * (j - (J + 1) / 2) / (d * J)
    return l.float().double()  # the model computes the weights in double, stores float


def encode(E, words):
    l = pe_code(len(words), D)
    return sum(l[j] * E[w] for j, w in enumerate(words))


def run(kind, K):
    E = [weights((V, D), p) for p in range(K + 1)]
    T = [weights((TIME_ROWS, D), K + 1 + p) for p in range(K + 1)]
    M = max(len(q[0]) for q in QUESTIONS)
    lines, losses = [], []
    for b, (memory, query, answer) in enumerate(QUESTIONS):
        slots = list(reversed(memory))  # slot 0 = the latest sentence
        n = len(slots)

        def emb(t):  # the memory embedding by table t: [n, d]
            return torch.stack([encode(E[t], s) + T[t][age] for age, s in enumerate(slots)])

        u1 = encode(E[0], query)
        m = [emb(k) for k in range(K)]  # hop k's keys: A^{k+1} = C^k
        c = [emb(k + 1) for k in range(K)]
        unary = [m[k] @ u1 for k in range(K)]  # [n] each
        pair = [c[k] @ m[k + 1].T for k in range(K - 1)] if kind == "crf" else []
        # brute force over all n^K selections
        logp = {}
        for z in itertools.product(range(n), repeat=K):
            s = sum(unary[k][z[k]] for k in range(K))
            s = s + sum(pair[k][z[k], z[k + 1]] for k in range(len(pair)))
            logp[z] = s
        logz = torch.logsumexp(torch.stack(list(logp.values())), 0)
        marg = torch.zeros(K, n)
        for z, s in logp.items():
            for k in range(K):
                marg[k, z[k]] += torch.exp(s - logz)
        u = u1 + sum(marg[k] @ c[k] for k in range(K))
        logits = E[K] @ u
        losses.append(-torch.log_softmax(logits, 0)[answer])
        for k in range(K):
            w = [marg[k, i].item() if i < n else 0.0 for i in range(M)]
            lines.append(f"{kind} K{K} hop{k} q{b} " + " ".join(f"{x:.17g}" for x in w))
    loss = sum(losses) / len(losses)
    return [f"{kind} K{K} loss {loss.item():.17g}"] + lines


def main():
    os.makedirs(OUT, exist_ok=True)
    out = []
    for kind in ("crf", "unary"):
        for K in (2, 3):
            out += run(kind, K)
    with open(os.path.join(OUT, "crf.txt"), "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
