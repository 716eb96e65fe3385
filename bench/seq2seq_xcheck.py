"""Cross-check of the models of bench/seq2seq-bleu.sh, the LSTM + Bahdanau encoder-decoder
and the post-norm Transformer: evaluates a trained model in PyTorch (the RNN or Transformer
class of bench/seq2seq_bleu_torch.py), either attnkit's (parameters exported by
bench-seq2seq-export; the model type is read from the parameter names) or PyTorch's own
(--save of seq2seq_bleu_torch.py), on the held-out pairs of a seq2seq-bleu.sh run directory:
  * greedy translations of test.en exactly as seq2seq_bleu_torch.py makes them (batches of
    64 sorted by length, padded keys masked, --max-length 50), written to --out, their
    corpus BLEU against test.ref (the bleu tool) and their number of <unk> tokens; with
    --compare HYP, the count of lines identical to HYP (e.g. rnn.attnkit.out);
  * teacher-forced statistics of test.en -> test.fr, dropout off, no length cut, no label
    smoothing, the source as tokens + <eos> and the target as <bos> tokens <eos> (mean over
    target tokens, <eos> included): cross-entropy (nats), the same over non-<unk> and over
    <unk> targets, the mean probability put on <unk>, the share of positions whose argmax is
    <unk>.
  seq2seq_xcheck.py (--npz ATTNKIT.npz | --pt PYTORCH.pt) --dir RUN_DIR --out HYP.txt
      [--compare HYP] [--bleu PATH/TO/bleu] [--threads 1] [--valid] [--heads 4]
      [--grad GRAD.npz] [--train-steps K --after AFTER.npz [--attnkit-steps EXPORT_OUTPUT]]
      [--label-smoothing E] [--lr X] [--warmup N] [--schedule constant|inverse-sqrt] [--double]
--grad (with --npz) compares attnkit's gradient of the mean loss of the first 64 held-out
pairs (bench-seq2seq-export [OPTIONS] MODEL OUT.npz PAIRS.tsv GRAD.npz, PAIRS.tsv = paste
test.en test.fr) with PyTorch's: per parameter, max |difference| / max |PyTorch's|.
--train-steps K --after AFTER.npz (with --npz) trains the loaded weights K steps in PyTorch
as seq2seq_bleu_torch.py does (Adam β 0.9/0.98, ε 1e-9, clip_grad_norm_ 1, rate --lr times
the --warmup / --schedule factor) with dropout off on batches of 64 consecutive held-out
pairs (step k: pairs 64k .. 64k+63, wrapping), as bench-seq2seq-export [OPTIONS] MODEL
OUT.npz PAIRS.tsv GRAD.npz K AFTER.npz does in attnkit, and compares the results: per
parameter, max |PyTorch - attnkit| / max |PyTorch's change| and ‖PyTorch - attnkit‖ /
‖PyTorch's change‖ (l2; the max is set by a few elements whose Adam steps amplify rounding),
and for each LSTM bias the ratio of PyTorch's change (b_ih + b_hh) to attnkit's;
--attnkit-steps (the export's stdout) adds each step's loss and gradient norm against
attnkit's. --label-smoothing applies to
--grad and --train-steps; give the export the same options. The recipes:
  LSTM         (the defaults: no smoothing, --lr 1e-3, constant)
  Transformer  --label-smoothing 0.1 --lr 5e-4 --warmup 1000 --schedule inverse-sqrt
--double runs the gradient and the steps also in float64 (a copy of the model) and reports
both float32 sides' distance to it (same scales): which side any difference comes from.
Parameters whose gradient is below 1e-6 of the largest (the Transformer's attention key
biases: exactly 0 in exact arithmetic, as q.b_k is the same for every key of a query) are
marked "noise" and left out of the maxima: both sides hold float32 rounding there, and
Adam turns it into steps of up to lr in random directions.
--valid adds the same teacher-forced statistics on valid.tsv with the training cut
(--max-len 20), the figure attnkit's log calls valid_loss.
attnkit's LSTM keeps PyTorch's gate order (i, f, g, o) and one bias b = b_ih + b_hh; it is
loaded as bias_ih = b, bias_hh = 0. The Transformer's q, k, v Linear layers are stacked
into PyTorch's in_proj (in that order), o is out_proj, ff.l1/l2 linear1/2, normK.gain/bias
normK.weight/bias. Linear weights are [out, in] on both sides.
Prints one "key<TAB>value" line per figure."""
import argparse
import copy
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seq2seq_bleu_torch as sbt  # noqa: E402

UNK, PAD, EOS = sbt.UNK, sbt.PAD, sbt.EOS


def load_npz(path):
    return {k: torch.from_numpy(np.asarray(v, dtype=np.float32)) for k, v in np.load(path).items()}


def rnn_state(a):
    """attnkit's LSTM + Bahdanau parameters (popped from a) as the RNN's state_dict, and the
    (attnkit name, PyTorch name, rows) triples whose gradients are directly comparable."""
    layers = sum(1 for k in a if k.startswith("encoder.l") and k.endswith(".W_ih"))
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
    names = [("src_embedding.table", "src_emb.weight"), ("tgt_embedding.table", "tgt_emb.weight"),
             ("attention.key.W", "att_k.weight"), ("attention.query.W", "att_q.weight"),
             ("attention.query.b", "att_q.bias"), ("attention.v", "att_v"),
             ("output.W", "out.weight"), ("output.b", "out.bias")]
    for l in range(layers):
        names.extend([(f"encoder.l{l}.W_ih", f"enc.weight_ih_l{l}"), (f"encoder.l{l}.W_hh", f"enc.weight_hh_l{l}"),
                      (f"encoder.l{l}.b", f"enc.bias_ih_l{l}"), (f"decoder.l{l}.W_ih", f"dec.{l}.weight_ih"),
                      (f"decoder.l{l}.W_hh", f"dec.{l}.weight_hh"), (f"decoder.l{l}.b", f"dec.{l}.bias_ih")])
    return sd, [(ak, tk, None) for ak, tk in names]


def transformer_state(a):
    """attnkit's Transformer parameters (popped from a) as the Transformer's state_dict: each
    attention's q, k, v Linear layers stacked (in that order) into in_proj_weight [3d, d] and
    in_proj_bias [3d], o as out_proj, ff.l1/ff.l2 as linear1/linear2, normK.gain/bias as
    normK.weight/bias. Also the (attnkit name, PyTorch name, rows) triples."""
    if "embedding.table" in a:
        raise SystemExit("seq2seq_xcheck: shared embeddings are not supported")
    names = []

    def put(tk, ak):
        sd[tk] = a.pop(ak)
        names.append((ak, tk, None))

    sd = {}
    put("src_emb.weight", "src_embedding.table")
    put("tgt_emb.weight", "tgt_embedding.table")
    d = sd["src_emb.weight"].shape[1]
    for side, tside, attns in (("encoder", "enc", [("self_attn", "self_attn")]),
                               ("decoder", "dec", [("self_attn", "self_attn"), ("cross_attn", "multihead_attn")])):
        layers = sum(1 for k in a if k.startswith(side + ".l") and k.endswith(".self_attn.q.W"))
        for l in range(layers):
            ap, tp = f"{side}.l{l}", f"{tside}.layers.{l}"
            for aa, ta in attns:
                for kind, tkind in (("W", "weight"), ("b", "bias")):
                    sd[f"{tp}.{ta}.in_proj_{tkind}"] = torch.cat([a.pop(f"{ap}.{aa}.{x}.{kind}") for x in "qkv"], 0)
                    names.extend((f"{ap}.{aa}.{x}.{kind}", f"{tp}.{ta}.in_proj_{tkind}", slice(i * d, (i + 1) * d))
                                 for i, x in enumerate("qkv"))
                put(f"{tp}.{ta}.out_proj.weight", f"{ap}.{aa}.o.W")
                put(f"{tp}.{ta}.out_proj.bias", f"{ap}.{aa}.o.b")
            for i in (1, 2):
                put(f"{tp}.linear{i}.weight", f"{ap}.ff.l{i}.W")
                put(f"{tp}.linear{i}.bias", f"{ap}.ff.l{i}.b")
            for i in range(1, len(attns) + 2):
                put(f"{tp}.norm{i}.weight", f"{ap}.norm{i}.gain")
                put(f"{tp}.norm{i}.bias", f"{ap}.norm{i}.bias")
    put("out.weight", "output.W")
    put("out.bias", "output.b")
    return sd, names


def state_from_attnkit(npz):
    """attnkit's parameters (bench-seq2seq-export) as a state_dict of the model of
    seq2seq_bleu_torch.py, and the (attnkit name, PyTorch name, rows or None) triples whose
    gradients are directly comparable (rows: a slice of the PyTorch tensor's rows)."""
    a = load_npz(npz)
    sd, names = (transformer_state if any(k.endswith(".self_attn.q.W") for k in a) else rnn_state)(a)
    if a:
        raise SystemExit(f"seq2seq_xcheck: parameters not mapped: {sorted(a)}")
    return sd, names


def is_transformer(sd):
    return "enc.layers.0.self_attn.in_proj_weight" in sd


def build(sd, heads=4):
    sv, e = sd["src_emb.weight"].shape
    tv = sd["tgt_emb.weight"].shape[0]
    if is_transformer(sd):
        layers = 1 + max(int(k.split(".")[2]) for k in sd if k.startswith("enc.layers."))
        m = sbt.Transformer(sv, tv, e, heads, sd["enc.layers.0.linear1.weight"].shape[0], layers, 0.0)
    else:
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


def batch_loss(m, chunk, smoothing=0.0):
    """The mean cross-entropy (label smoothing as given) over the chunk's non-<pad> target
    tokens (PyTorch's training loss)."""
    src, lens, tin, tout = batch_of(chunk)
    logits = m.logits(src, lens, tin)
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tout.reshape(-1),
                                             ignore_index=PAD, label_smoothing=smoothing)


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


NOISE = 1e-6  # a gradient below NOISE x the largest parameter's is rounding noise (see --double)


def param_of(state, tk, rows, rnn_bias=False):
    """The PyTorch tensor (rows) that attnkit's parameter maps to; an LSTM's bias_ih as the
    effective bias b_ih + b_hh."""
    x = state[tk] + state[tk.replace("bias_ih", "bias_hh")] if rnn_bias else state[tk]
    return x if rows is None else x[rows]


def rel(x, ref, scale):
    return float((x.double() - ref.double()).abs().max() / scale.double().abs().max().clamp_min(1e-30))


def rel2(x, ref, scale):
    return float((x.double() - ref.double()).norm() / scale.double().norm().clamp_min(1e-30))


def grads_of(m, chunk, smoothing):
    m.zero_grad()
    loss = batch_loss(m, chunk, smoothing)
    loss.backward()
    return loss.item(), {k: p.grad.detach().clone() for k, p in m.named_parameters()}


def noise_names(names, grads):
    """attnkit names whose gradient is at rounding level: below NOISE x the largest max |g|
    (the attention key biases: in exact arithmetic q.b_k adds the same to every score of a
    query, so their gradient is 0 and both sides hold float32 noise)."""
    size = {ak: float(param_of(grads, tk, rows).abs().max()) for ak, tk, rows in names}
    top = max(size.values())
    return {ak for ak, v in size.items() if v < NOISE * top}


def compare_grads(m, names, grad_npz, pairs, smoothing=0.0, double=False):
    """attnkit's gradient (grad_npz) against PyTorch's on the first 64 pairs: per parameter
    max |difference| / max |PyTorch's|; with double also both sides' distance to PyTorch's
    float64 gradient (same scale). Noise parameters (noise_names) are left out of the maxima."""
    g = load_npz(grad_npz)
    loss, mine = grads_of(m, pairs[:64], smoothing)
    print(f"grad_batch_loss_pytorch\t{loss:.6f}")
    ref = mine
    if double:
        loss64, ref = grads_of(copy.deepcopy(m).double(), pairs[:64], smoothing)
        print(f"grad_batch_loss_pytorch_float64\t{loss64:.9f}")
    noise = noise_names(names, ref)
    worst = worst_ak = worst_pt = 0.0
    for ak, tk, rows in names:
        t = param_of(mine, tk, rows)
        r = rel(t, g[ak], t)
        line = f"grad_rel_diff\t{ak}\t{tk}\t{r:.3e}\t{float(t.abs().max()):.3e}"
        if double:
            t64 = param_of(ref, tk, rows)
            r_ak, r_pt = rel(g[ak], t64, t64), rel(t, t64, t64)
            line += f"\tfloat64: attnkit {r_ak:.3e} pytorch {r_pt:.3e}"
        if ak in noise:
            line += "\tnoise"
        else:
            worst = max(worst, r)
            if double:
                worst_ak, worst_pt = max(worst_ak, r_ak), max(worst_pt, r_pt)
        print(line)
    print(f"grad_rel_diff_max\t{worst:.3e}\t(without {len(noise)} noise parameters)")
    if double:
        print(f"grad_float64_rel_diff_max\tattnkit {worst_ak:.3e}\tpytorch {worst_pt:.3e}")


def train_steps(m, names, after_npz, pairs, steps, lr=1e-3, warmup=0, schedule="constant", smoothing=0.0,
                attnkit_steps=None, double=False):
    """K steps as seq2seq_bleu_torch.py trains (sbt.make_optimizer at lr, clip_grad_norm_ 1),
    dropout off; compares the parameters after them with attnkit's (after_npz): per parameter
    max |PyTorch - attnkit| / max |PyTorch's change| and the same in L2 norms (with double
    also both sides' distance to PyTorch's float64 run over its change), and, given
    attnkit_steps (bench-seq2seq-export's output), each step's loss and gradient norm with
    attnkit's. Noise parameters (noise_names of the first step's gradient) are left out of
    the maxima: Adam turns noise into steps of up to lr in either direction."""
    models = {"pytorch": m}
    if double:
        models["float64"] = copy.deepcopy(m).double()
    init = {k: v.detach().double().clone() for k, v in m.state_dict().items()}
    opts = {}
    for key, mm in models.items():
        opts[key] = sbt.make_optimizer(mm.parameters(), lr, warmup, schedule)
        mm.train()  # dropout p is 0 in this model
    n = len(pairs)
    theirs = {}
    if attnkit_steps:
        for line in open(attnkit_steps, encoding="utf-8"):
            f = line.split("\t")
            if f[0] == "attnkit_step":
                theirs[int(f[1])] = (float(f[2]), float(f[3]))
    worst_loss = worst_norm = 0.0
    noise = set()
    for k in range(steps):
        chunk = [pairs[(64 * k + i) % n] for i in range(min(64, n))]
        got = {}
        for key, mm in models.items():
            opt, sched = opts[key]
            loss = batch_loss(mm, chunk, smoothing)
            opt.zero_grad()
            loss.backward()
            if k == 0 and key == list(models)[-1]:
                noise = noise_names(names, {t: p.grad for t, p in mm.named_parameters()})
            norm = float(torch.nn.utils.clip_grad_norm_(mm.parameters(), 1.0))
            opt.step()
            sched.step()
            got[key] = (loss.item(), norm)
        pl, pn = got["pytorch"]
        line = f"pytorch_step\t{k}\t{pl:.6f}\t{pn:.6f}"
        if k in theirs:
            al, an = theirs[k]
            rl, rn = abs(pl - al) / abs(pl), abs(pn - an) / pn
            worst_loss, worst_norm = max(worst_loss, rl), max(worst_norm, rn)
            line += f"\tattnkit\t{al:.6f}\t{an:.6f}\trel_diff\t{rl:.2e}\t{rn:.2e}"
        if double:
            line += "\tfloat64\t{:.6f}\t{:.6f}".format(*got["float64"])
        print(line)
    if theirs:
        print(f"step_loss_rel_diff_max\t{worst_loss:.3e}")
        print(f"step_grad_norm_rel_diff_max\t{worst_norm:.3e}")
    after, _ = state_from_attnkit(after_npz)
    now = {key: {k: v.detach().double() for k, v in mm.eval().state_dict().items()} for key, mm in models.items()}
    worst = worst_ak = worst_pt = worst2 = worst2_ak = worst2_pt = 0.0
    for ak, tk, rows in names:
        bias = "bias_ih" in tk
        before = param_of(init, tk, rows, bias)
        mine, other = param_of(now["pytorch"], tk, rows, bias), param_of(after, tk, rows)
        if bias:  # the effective bias b_ih + b_hh against attnkit's b
            d_mine, d_other = mine - before, other.double() - before
            ratio = float((d_mine * d_other).sum() / (d_other * d_other).sum())
            print(f"bias_change_ratio_pytorch_over_attnkit\t{tk}\t{ratio:.4f}")
        change = mine - before
        r, r2 = rel(mine, other, change), rel2(mine, other, change)
        line = f"after_rel_diff\t{ak}\t{tk}\t{r:.3e}\tl2 {r2:.3e}\t{float(change.abs().max()):.3e}"
        if double:
            ref = param_of(now["float64"], tk, rows, bias)
            r_ak, r_pt = rel(other, ref, ref - before), rel(mine, ref, ref - before)
            l_ak, l_pt = rel2(other, ref, ref - before), rel2(mine, ref, ref - before)
            line += f"\tfloat64: attnkit {r_ak:.3e} l2 {l_ak:.3e} pytorch {r_pt:.3e} l2 {l_pt:.3e}"
        if ak in noise:
            line += "\tnoise"
        else:
            worst, worst2 = max(worst, r), max(worst2, r2)
            if double:
                worst_ak, worst_pt = max(worst_ak, r_ak), max(worst_pt, r_pt)
                worst2_ak, worst2_pt = max(worst2_ak, l_ak), max(worst2_pt, l_pt)
        print(line)
    print(f"after_rel_diff_max\t{worst:.3e}\tl2 {worst2:.3e}\t(without {len(noise)} noise parameters)")
    if double:
        print(f"after_float64_rel_diff_max\tattnkit {worst_ak:.3e} l2 {worst2_ak:.3e}\t"
              f"pytorch {worst_pt:.3e} l2 {worst2_pt:.3e}")


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
    ap.add_argument("--heads", type=int, default=4, help="the Transformer's attention heads")
    ap.add_argument("--label-smoothing", type=float, default=0.0, help="of --grad and --train-steps' loss")
    ap.add_argument("--lr", type=float, default=1e-3, help="--train-steps: the base learning rate")
    ap.add_argument("--warmup", type=int, default=0, help="--train-steps: warm-up steps")
    ap.add_argument("--schedule", choices=["constant", "inverse-sqrt"], default="constant")
    ap.add_argument("--attnkit-steps", help="--train-steps: bench-seq2seq-export's output, to compare each step")
    ap.add_argument("--double", action="store_true",
                    help="--grad, --train-steps: also against PyTorch in float64 (which side is the nearer)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)

    stoks, sidx = sbt.read_vocab(os.path.join(a.dir, "src.vocab"))
    ttoks, tidx = sbt.read_vocab(os.path.join(a.dir, "tgt.vocab"))
    names = []
    if a.npz:
        sd, names = state_from_attnkit(a.npz)
    else:
        sd = torch.load(a.pt)
    m = build(sd, a.heads)
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
        compare_grads(m, names, a.grad, pairs, a.label_smoothing, a.double)
    if a.valid:
        vp = []
        for line in open(os.path.join(a.dir, "valid.tsv"), encoding="utf-8"):
            cols = line.rstrip("\n").rstrip("\r").split("\t")
            vp.append((sbt.encode(sbt.tokenize(cols[0]), sidx, 20, False),
                       sbt.encode(sbt.tokenize(cols[1]), tidx, 20, True)))
        report("valid_", teacher_forced(m, vp))
    if a.train_steps > 0:
        train_steps(m, names, a.after, pairs, a.train_steps, a.lr, a.warmup, a.schedule, a.label_smoothing,
                    a.attnkit_steps, a.double)


if __name__ == "__main__":
    main()
