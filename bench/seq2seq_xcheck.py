"""Cross-check of the LSTM + Bahdanau encoder-decoder of bench/seq2seq-bleu.sh: evaluates a
trained model in PyTorch (the RNN class of bench/seq2seq_bleu_torch.py), either attnkit's
(parameters exported by bench-seq2seq-export) or PyTorch's own (--save of
seq2seq_bleu_torch.py), on the held-out pairs of a seq2seq-bleu.sh run directory:
  * greedy translations of test.en exactly as seq2seq_bleu_torch.py makes them (batches of
    64 sorted by length, padded keys masked, --max-length 50), written to --out, their
    corpus BLEU against test.ref (the bleu tool) and their number of <unk> tokens; with
    --compare HYP, the count of lines identical to HYP (e.g. rnn.attnkit.out);
  * teacher-forced statistics of test.en -> test.fr, dropout off, no length cut, the source
    as tokens + <eos> and the target as <bos> tokens <eos> (mean over target tokens, <eos>
    included): cross-entropy (nats), the same over non-<unk> and over <unk> targets, the
    mean probability put on <unk>, the share of positions whose argmax is <unk>.
  seq2seq_xcheck.py (--npz ATTNKIT.npz | --pt PYTORCH.pt) --dir RUN_DIR --out HYP.txt
      [--compare HYP] [--bleu PATH/TO/bleu] [--threads 1] [--valid] [--grad GRAD.npz]
      [--train-steps K --after AFTER.npz]
--grad (with --npz) compares attnkit's gradient of the mean loss of the first 64 held-out
pairs (bench-seq2seq-export MODEL OUT.npz PAIRS.tsv GRAD.npz, PAIRS.tsv = paste test.en
test.fr) with PyTorch's: per parameter, max |difference| / max |PyTorch's|.
--train-steps K --after AFTER.npz (with --npz) trains the loaded weights K steps in PyTorch
as seq2seq_bleu_torch.py does (Adam lr 1e-3, β 0.9/0.98, ε 1e-9, clip_grad_norm_ 1) with
dropout off on batches of 64 consecutive held-out pairs (step k: pairs 64k .. 64k+63,
wrapping), as bench-seq2seq-export MODEL OUT.npz PAIRS.tsv GRAD.npz K AFTER.npz does in
attnkit, and compares the results: per parameter, max |PyTorch - attnkit| / max |PyTorch's
change|, and for each LSTM bias the ratio of PyTorch's change (b_ih + b_hh) to attnkit's.
--valid adds the same teacher-forced statistics on valid.tsv with the training cut
(--max-len 20), the figure attnkit's log calls valid_loss.
attnkit's LSTM keeps PyTorch's gate order (i, f, g, o) and one bias b = b_ih + b_hh; it is
loaded as bias_ih = b, bias_hh = 0. Linear weights are [out, in] on both sides.
Prints one "key<TAB>value" line per figure."""
import argparse
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seq2seq_bleu_torch as sbt  # noqa: E402

UNK, PAD, EOS = sbt.UNK, sbt.PAD, sbt.EOS


NAMES = []  # (attnkit name, PyTorch name) pairs whose gradients are directly comparable


def state_from_attnkit(npz, layers):
    NAMES.clear()
    a = {k: torch.from_numpy(np.asarray(v, dtype=np.float32)) for k, v in np.load(npz).items()}
    sd = {"src_emb.weight": a.pop("src_embedding.table"), "tgt_emb.weight": a.pop("tgt_embedding.table")}
    for l in range(layers):
        e, d = f"encoder.l{l}", f"decoder.l{l}"
        sd[f"enc.weight_ih_l{l}"] = a.pop(e + ".W_ih")
        sd[f"enc.weight_hh_l{l}"] = a.pop(e + ".W_hh")
        sd[f"enc.bias_ih_l{l}"] = a.pop(e + ".b")
        sd[f"enc.bias_hh_l{l}"] = torch.zeros_like(sd[f"enc.bias_ih_l{l}"])
        sd[f"dec.{l}.weight_ih"] = a.pop(d + ".W_ih")
        sd[f"dec.{l}.weight_hh"] = a.pop(d + ".W_hh")
        sd[f"dec.{l}.bias_ih"] = a.pop(d + ".b")
        sd[f"dec.{l}.bias_hh"] = torch.zeros_like(sd[f"dec.{l}.bias_ih"])
    sd["att_k.weight"] = a.pop("attention.key.W")
    sd["att_q.weight"] = a.pop("attention.query.W")
    sd["att_q.bias"] = a.pop("attention.query.b")
    sd["att_v"] = a.pop("attention.v")
    sd["out.weight"] = a.pop("output.W")
    sd["out.bias"] = a.pop("output.b")
    NAMES.extend([("src_embedding.table", "src_emb.weight"), ("tgt_embedding.table", "tgt_emb.weight"),
                  ("attention.key.W", "att_k.weight"), ("attention.query.W", "att_q.weight"),
                  ("attention.query.b", "att_q.bias"), ("attention.v", "att_v"),
                  ("output.W", "out.weight"), ("output.b", "out.bias")])
    for l in range(layers):
        NAMES.extend([(f"encoder.l{l}.W_ih", f"enc.weight_ih_l{l}"), (f"encoder.l{l}.W_hh", f"enc.weight_hh_l{l}"),
                      (f"encoder.l{l}.b", f"enc.bias_ih_l{l}"), (f"decoder.l{l}.W_ih", f"dec.{l}.weight_ih"),
                      (f"decoder.l{l}.W_hh", f"dec.{l}.weight_hh"), (f"decoder.l{l}.b", f"dec.{l}.bias_ih")])
    if a:
        raise SystemExit(f"seq2seq_xcheck: parameters not mapped: {sorted(a)}")
    return sd


def build(sd):
    sv, e = sd["src_emb.weight"].shape
    tv = sd["tgt_emb.weight"].shape[0]
    h = sd["att_k.weight"].shape[0]
    layers = 1 + max(int(k.split("_l")[-1]) for k in sd if k.startswith("enc.weight_ih_l"))
    m = sbt.RNN(sv, tv, e, h, layers, 0.0)
    m.load_state_dict(sd)
    m.eval()
    return m


@torch.no_grad()
def batch_of(chunk):
    """(source ids, target ids with <bos>/<eos>) pairs → padded sources, their lengths, the
    decoder's inputs and the targets it predicts."""
    src = sbt.pad([p[0] for p in chunk])
    lens = torch.tensor([len(p[0]) for p in chunk])
    tgt = sbt.pad([p[1] for p in chunk])
    return src, lens, tgt[:, :-1], tgt[:, 1:]


def batch_loss(m, chunk):
    """The mean cross-entropy over the chunk's non-<pad> target tokens (PyTorch's training loss)."""
    src, lens, tin, tout = batch_of(chunk)
    logits = m.logits(src, lens, tin)
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tout.reshape(-1),
                                             ignore_index=PAD)


def teacher_forced(m, pairs):
    """pairs: (source ids, target ids with <bos>/<eos>). Sums over target tokens."""
    s = dict(nll=0.0, n=0, nll_unk=0.0, n_unk=0, p_unk=0.0, argmax_unk=0)
    for k in range(0, len(pairs), 64):
        src, lens, tin, tout = batch_of(pairs[k:k + 64])
        logp = torch.log_softmax(m.logits(src, lens, tin).double(), -1)
        keep = tout != PAD
        tok = -logp.gather(-1, tout.unsqueeze(-1)).squeeze(-1)
        unk = keep & (tout == UNK)
        s["nll"] += float(tok[keep].sum())
        s["n"] += int(keep.sum())
        s["nll_unk"] += float(tok[unk].sum())
        s["n_unk"] += int(unk.sum())
        s["p_unk"] += float(logp[..., UNK].exp()[keep].sum())
        s["argmax_unk"] += int((logp.argmax(-1) == UNK)[keep].sum())
    return s


def compare_grads(m, sd_names, grad_npz, pairs):
    g = {k: torch.from_numpy(np.asarray(v, dtype=np.float32)) for k, v in np.load(grad_npz).items()}
    m.zero_grad()
    loss = batch_loss(m, pairs[:64])
    loss.backward()
    print(f"grad_batch_loss_pytorch\t{loss.item():.6f}")
    named = dict(m.named_parameters())
    worst = 0.0
    for ak, tk in sd_names:
        mine = named[tk].grad
        other = g[ak]
        rel = float((mine - other).abs().max() / mine.abs().max().clamp_min(1e-30))
        worst = max(worst, rel)
        print(f"grad_rel_diff\t{ak}\t{tk}\t{rel:.3e}\t{float(mine.abs().max()):.3e}")
    print(f"grad_rel_diff_max\t{worst:.3e}")


def train_steps(m, sd_names, after_npz, pairs, steps):
    init = {k: v.detach().clone() for k, v in m.state_dict().items()}
    opt = torch.optim.Adam(m.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    m.train()  # dropout p is 0 in this model
    n = len(pairs)
    for k in range(steps):
        loss = batch_loss(m, [pairs[(64 * k + i) % n] for i in range(min(64, n))])
        opt.zero_grad()
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        print(f"pytorch_step\t{k}\t{loss.item():.6f}\t{float(norm):.6f}")
    m.eval()
    after = state_from_attnkit(after_npz, sum(1 for x in sd_names if x[0].endswith(".W_ih")) // 2)
    now = m.state_dict()
    worst = 0.0
    for key in now:
        if "bias_hh" in key:
            continue
        mine, other = now[key], after[key]
        if "bias_ih" in key:  # the effective bias b_ih + b_hh against attnkit's b
            hh = key.replace("bias_ih", "bias_hh")
            mine = mine + now[hh]
            d_mine = mine - init[key] - init[hh]
            d_other = other - init[key] - init[hh]
            ratio = float((d_mine * d_other).sum() / (d_other * d_other).sum())
            print(f"bias_change_ratio_pytorch_over_attnkit\t{key}\t{ratio:.4f}")
        else:
            d_mine = mine - init[key]
        rel = float((mine - other).abs().max() / d_mine.abs().max().clamp_min(1e-30))
        worst = max(worst, rel)
        print(f"after_rel_diff\t{key}\t{rel:.3e}")
    print(f"after_rel_diff_max\t{worst:.3e}")


def report(prefix, s):
    n, nu = s["n"], s["n_unk"]
    print(f"{prefix}nll\t{s['nll'] / n:.6f}")
    print(f"{prefix}tokens\t{n}")
    print(f"{prefix}nll_non_unk\t{(s['nll'] - s['nll_unk']) / (n - nu):.6f}")
    print(f"{prefix}nll_on_unk_targets\t{s['nll_unk'] / max(nu, 1):.6f}")
    print(f"{prefix}unk_targets\t{nu}")
    print(f"{prefix}mean_p_unk\t{s['p_unk'] / n:.6f}")
    print(f"{prefix}argmax_unk_share\t{s['argmax_unk'] / n:.6f}")


def main():
    ap = argparse.ArgumentParser()
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--npz", help="attnkit parameters (bench-seq2seq-export)")
    g.add_argument("--pt", help="PyTorch state_dict (seq2seq_bleu_torch.py --save)")
    ap.add_argument("--dir", required=True, help="a bench/seq2seq-bleu.sh output directory")
    ap.add_argument("--out", required=True, help="greedy translations of DIR/test.en go here")
    ap.add_argument("--compare", help="translations to compare with line by line")
    ap.add_argument("--bleu", default=os.environ.get("BLEU", "bleu"), help="the bleu tool")
    ap.add_argument("--max-length", type=int, default=50)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--valid", action="store_true")
    ap.add_argument("--train-steps", type=int, default=0)
    ap.add_argument("--after", help="attnkit's parameters after --train-steps steps")
    ap.add_argument("--grad", help="attnkit's gradient on the first 64 held-out pairs (with --npz)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)

    stoks, sidx = sbt.read_vocab(os.path.join(a.dir, "src.vocab"))
    ttoks, tidx = sbt.read_vocab(os.path.join(a.dir, "tgt.vocab"))
    if a.npz:
        sd = state_from_attnkit(a.npz, layers=sum(1 for k in np.load(a.npz).keys()
                                                   if k.startswith("encoder.l") and k.endswith(".W_ih")))
    else:
        sd = torch.load(a.pt)
    m = build(sd)
    if m.src_emb.weight.shape[0] != len(stoks) or m.tgt_emb.weight.shape[0] != len(ttoks):
        raise SystemExit("seq2seq_xcheck: the model's vocabulary sizes differ from DIR/*.vocab")

    lines = [l.rstrip("\n").rstrip("\r") for l in open(os.path.join(a.dir, "test.en"), encoding="utf-8")]
    refs = [l.rstrip("\n").rstrip("\r") for l in open(os.path.join(a.dir, "test.fr"), encoding="utf-8")]
    srcs = [sbt.encode(sbt.tokenize(l), sidx, 0, False) for l in lines]
    hyps = sbt.greedy_all(m, srcs, ttoks, a.max_length)
    with open(a.out, "w", encoding="utf-8") as f:
        for h in hyps:
            f.write(h + "\n")
    bleu = subprocess.run([a.bleu, "-r", os.path.join(a.dir, "test.ref"), a.out], check=True,
                          capture_output=True, text=True).stdout.strip()
    print(f"greedy_bleu\t{bleu}")
    print(f"greedy_unk_tokens\t{sum(h.split().count('<unk>') for h in hyps)}")
    print(f"greedy_tokens\t{sum(len(h.split()) for h in hyps)}")
    if a.compare:
        other = [l.rstrip("\n") for l in open(a.compare, encoding="utf-8")]
        same = sum(x == y for x, y in zip(hyps, other))
        print(f"identical_lines\t{same}/{len(hyps)}")
        print(f"compare_unk_tokens\t{sum(h.split().count('<unk>') for h in other)}")

    pairs = [(s, sbt.encode(sbt.tokenize(r), tidx, 0, True)) for s, r in zip(srcs, refs)]
    report("test_", teacher_forced(m, pairs))
    if a.grad:
        compare_grads(m, NAMES, a.grad, pairs)
    if a.valid:
        vp = []
        for line in open(os.path.join(a.dir, "valid.tsv"), encoding="utf-8"):
            cols = line.rstrip("\n").rstrip("\r").split("\t")
            vp.append((sbt.encode(sbt.tokenize(cols[0]), sidx, 20, False),
                       sbt.encode(sbt.tokenize(cols[1]), tidx, 20, True)))
        report("valid_", teacher_forced(m, vp))
    if a.train_steps > 0:
        train_steps(m, list(NAMES), a.after, pairs, a.train_steps)


if __name__ == "__main__":
    main()
