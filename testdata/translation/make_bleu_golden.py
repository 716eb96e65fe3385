#!/usr/bin/env python3
"""Golden BLEU values for tests/cli/bleu.sh, from an implementation written here from the
definitions (sacreBLEU 2.x `compute_bleu` with `--tokenize none`, one reference; d2l's
`bleu` for the textbook score). sacreBLEU itself is not installable offline here, so this
is an independent transcription, not a call into it.

Hypotheses: the French side of fra-small.txt with seeded damage (a word replaced, a word
dropped, a word added). Tokens: Python's str.split() (Unicode white space, as sacreBLEU).

Writes bleu-hyp.txt (the references are `cut -f2 fra-small.txt`), bleu-golden.tsv (corpus scores) and
bleu-sentence.tsv (per-sentence: sacreBLEU exp, sacreBLEU none, textbook k=2), scores x 100.
Run from this folder: python3 make_bleu_golden.py
"""
import collections
import math
import random

random.seed(1)
refs = [line.split('\t')[1] for line in open('fra-small.txt', encoding='utf-8').read().split('\n') if line]
hyps = []
for r in refs:
    t = r.split()
    if random.random() < 0.5 and t:
        t[random.randrange(len(t))] = 'xx'
    if random.random() < 0.3 and len(t) > 1:
        del t[random.randrange(len(t))]
    if random.random() < 0.2:
        t.append('le')
    hyps.append(' '.join(t))


def ngrams(toks, n):
    return collections.Counter(tuple(toks[i:i + n]) for i in range(len(toks) - n + 1))


def stats(h, r, N):
    h, r = h.split(), r.split()
    m, t = [0] * N, [0] * N
    for n in range(1, N + 1):
        hc, rc = ngrams(h, n), ngrams(r, n)
        t[n - 1] = sum(hc.values())
        m[n - 1] = sum(min(c, rc[g]) for g, c in hc.items())
    return m, t, len(h), len(r)


def score(m, t, c, r, N, smooth, effective_order):
    bp = 1.0 if c >= r else (math.exp(1 - r / c) if c > 0 else 0.0)
    if not any(m):
        return 0.0
    p, k, eo = [0.0] * N, 1.0, N
    for n in range(1, N + 1):
        if t[n - 1] == 0:
            break
        if effective_order:
            eo = n
        if m[n - 1] == 0:
            if smooth == 'exp':
                k *= 2
                p[n - 1] = 1 / (k * t[n - 1])
        else:
            p[n - 1] = m[n - 1] / t[n - 1]
    return bp * math.exp(sum(math.log(x) if x > 0 else -9999999999 for x in p[:eo]) / eo)


def textbook(h, r, k):
    h, r = h.split(), r.split()
    if not h:
        return 0.0
    s = math.exp(min(0, 1 - len(r) / len(h)))
    for n in range(1, min(k, len(h)) + 1):
        hc, rc = ngrams(h, n), ngrams(r, n)
        s *= (sum(min(c, rc[g]) for g, c in hc.items()) / (len(h) - n + 1)) ** (0.5 ** n)
    return s


with open('bleu-hyp.txt', 'w', encoding='utf-8') as f:
    f.write('\n'.join(hyps) + '\n')
with open('bleu-golden.tsv', 'w') as f:
    f.write('lines\tmax_n\tsmooth\tbleu\n')
    # the first `lines` pairs: short corpora reach orders without any match (smoothing)
    for lines in (60, 200, 2000):
        for N in (1, 2, 3, 4, 6, 9, 10):
            for sm in ('exp', 'none'):
                tot = [[0] * N, [0] * N, 0, 0]
                for h, r in zip(hyps[:lines], refs[:lines]):
                    m, t, c, rl = stats(h, r, N)
                    tot = [[a + b for a, b in zip(tot[0], m)], [a + b for a, b in zip(tot[1], t)],
                           tot[2] + c, tot[3] + rl]
                f.write('%d\t%d\t%s\t%.6f\n' % (lines, N, sm, 100 * score(*tot, N, sm, False)))
with open('bleu-sentence.tsv', 'w') as f:
    for h, r in zip(hyps, refs):
        m, t, c, rl = stats(h, r, 4)
        f.write('%.6f\t%.6f\t%.6f\n' % (100 * score(m, t, c, rl, 4, 'exp', True),
                                        100 * score(m, t, c, rl, 4, 'none', True),
                                        100 * textbook(h, r, 2)))
