"""The Transformer chapter's dates experiment over several seeds: norm placement x warm-up,
beside Part III's attention-RNN, on the same data.

    .venv/bin/python bench/study_transformer.py                   # seeds 0-4, ~8 min
    .venv/bin/python bench/study_transformer.py --layers 6 --seeds 0 1 2 \
        --models pre/warm-up post/warm-up pre/none post/none       # ~8 min

Task: human-readable dates -> ISO dates (``seqlearn.data.date_pairs``), batches of 64 fresh
pairs from ``numpy.random.default_rng(seed)`` (every model of a seed reads the same stream;
the RNN, with fewer steps, its first batches), weights from ``seed_all(seed)``, one thread.
Every model is scored by greedy exact match on the same 500 test dates (``default_rng(10_000)``,
the attention chapter's test set), and every 50 steps on the first 300 of them (the learning
curve; evaluation time is not training time).

- **Transformer** (the chapter's setting): d 64, ``--layers`` encoder and decoder layers (2),
  4 heads, d_ff 128, embeddings N(0, 0.5^2) and not scaled by sqrt(d), no dropout, Adam
  (lr 5e-3), gradients clipped to norm 1, 300 steps, the rate of eq-tf-linear-warmup: linear
  warm-up over 50 steps then linear decay to 0 ("warm-up"), or decay from the first step
  ("none"). Pre-norm (``norm_first=True``) and post-norm (the paper's).
- **Attention-RNN** (the attention chapter's recipe): ``Seq2Seq`` with a bidirectional GRU
  encoder (2 x 32), GRU decoder of 64, additive attention, embeddings of 32, Adam 5e-3
  (constant), clip 1, 150 steps.

Per seed and model it prints the final exact match, the learning curve, the first checkpoint
at >= 0.97, the training's process time and the time per step, and how much cross-attention
the best head puts on the source's year while the year's last two digits are written (see
``year_attention``). Times are CPU process time on a machine shared with other jobs: compare
them within one run, as ratios.

Measured on the book's 2-core machine (one thread, other jobs running), default arguments,
seeds 0-4 (exact match on 500 dates; first checkpoint >= 0.97; median training time):

    rnn           0.999 (0.998-1.000)  steps 100-150          5.2 s  34.9 ms/step
    pre/warm-up   0.994 (0.990-0.998)  steps 200-300         13.9 s  46.5 ms/step  1.33x
    post/warm-up  0.994 (0.990-0.996)  steps 250-300         13.0 s  43.5 ms/step  1.25x
    pre/none      0.982 (0.964-0.998)  2 of 5 seeds never    14.4 s  48.0 ms/step  1.38x
    post/none     0.981 (0.966-0.996)  2 of 5 seeds never    13.3 s  44.2 ms/step  1.27x
    year attention of the best cross-attention head: >= 0.97 in every run

``--layers 6 --seeds 0 1 2 --models pre/warm-up post/warm-up pre/none post/none``
(6 + 6 layers, ~37 s per run):

    pre/warm-up   0.982-0.990     post/warm-up  0.996-1.000
    pre/none      0.106-0.300     post/none     0.000 in every seed

Under the perturbed numerics (`make study-perturbed STUDY=bench/study_transformer.py`; output in
bench/results/study_transformer.perturbed.txt; 26 minutes of CPU, every step about 4.5 times
slower on torch's scalar kernels), default arguments, seeds 0-4:

    rnn           0.999 (0.998-1.000)  steps 100-150         23.6 s 157.5 ms/step
    pre/warm-up   0.993 (0.986-0.998)  steps 200-300         66.3 s 221.0 ms/step  1.40x
    post/warm-up  0.994 (0.988-0.998)  steps 200-250         57.0 s 189.9 ms/step  1.21x
    pre/none      0.980 (0.972-0.994)  3 of 5 seeds never    56.3 s 187.7 ms/step  1.19x
    post/none     0.981 (0.970-0.990)  2 of 5 seeds never    63.6 s 212.1 ms/step  1.35x
    year attention of the best cross-attention head: >= 0.96 in every run (>= 0.97 for
    pre/warm-up, the chapter's model)

Seed 0 of pre/warm-up, the chapter's stored run, gives 0.986 here against 0.994 natively. With
``--layers 6`` only seed 0 was run (about 3.5 minutes of CPU per model; output in
bench/results/study_transformer.layers6.perturbed.txt): pre/warm-up 0.998, post/warm-up 0.996,
pre/none 0.052, post/none 0.000. Over both numerics: exact match 0.986-0.998 for the chapter's
model and 0.998-1.000 for the RNN; without warm-up 0.964-0.998 (pre) and 0.966-0.996 (post),
still below 0.97 at step 300 in 5 (pre) and 4 (post) of 10 runs; at 6 + 6 layers with warm-up
0.982-1.000, without 0.000-0.300.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from seqlearn.data import DATE_SOURCE_CHARS, DATE_TARGET_CHARS, Vocab, date_pairs, seq2seq_batch
from seqlearn.seeding import seed_all
from seqlearn.seq2seq import Seq2Seq, greedy_exact_match
from seqlearn.train import fit_seq2seq
from seqlearn.transformer import Transformer, decoded_exact_match, transformer_loss
from seqlearn.warmup import fit_scheduled, linear_warmup_rate

VIN, VOUT = Vocab(DATE_SOURCE_CHARS), Vocab(DATE_TARGET_CHARS)
BATCH, LR, EVERY = 64, 5e-3, 50
TF_STEPS, WARMUP, RNN_STEPS = 300, 50, 150
TEST = date_pairs(500, np.random.default_rng(10_000))


def transformer(layers: int, norm_first: bool) -> Transformer:
    """The chapter's model (seeded by the caller)."""
    return Transformer(VIN, VOUT, 64, 4, layers, 128, norm_first=norm_first, max_len=64)


def accuracy(model: torch.nn.Module, batch) -> float:
    if isinstance(model, Transformer):
        return float(decoded_exact_match(model, batch, VOUT).float().mean())
    return float(greedy_exact_match(model.eval(), batch).float().mean())


def year_attention(model: torch.nn.Module, batch, sources: list[str]) -> float:
    """Cross-attention on the source's year while the year's last two digits are written.

    For every test date, the weight that the query of each of the two digits (target
    positions 2 and 3) puts on the source's trailing digits (every format ends with its
    year), the smaller of the two; averaged over the dates. Returned for the best head of any
    layer (the RNN has one attention).
    """
    with torch.no_grad():
        if isinstance(model, Transformer):
            model(batch.src, batch.tgt_in, src_mask=batch.src_mask)
            weights = torch.stack(model.attention_maps()["cross"], 1)  # (B, L, H, T, S)
            weights = weights.flatten(1, 2)  # (B, L*H, T, S)
        else:
            weights = model(batch.src, batch.src_lengths, batch.tgt_in)[1][:, None]
    year = torch.zeros(weights.shape[0], weights.shape[-1], dtype=torch.bool)  # (B, S)
    for b, source in enumerate(sources):
        digits = len(source) - len(source.rstrip("0123456789"))
        year[b, len(source) - digits:len(source)] = True
    mass = (weights[:, :, 2:4] * year[:, None, None, :]).sum(-1).amin(-1)  # (B, heads)
    return float(mass.mean(0).max())


def run(name: str, seed: int, layers: int) -> dict:
    steps = RNN_STEPS if name == "rnn" else TF_STEPS
    pairs = date_pairs(TF_STEPS * BATCH, np.random.default_rng(seed))  # the RNN reads a prefix
    test, probe = seq2seq_batch(TEST, VIN, VOUT), seq2seq_batch(TEST[:300], VIN, VOUT)
    seed_all(seed)
    curve, eval_time = {}, 0.0

    def batches(k: int):
        nonlocal eval_time
        if k % EVERY == 0 and k > 0:  # the model after k steps
            start = time.process_time()
            with torch.no_grad():
                curve[k] = accuracy(model, probe)
            model.train()
            eval_time += time.process_time() - start
        return seq2seq_batch(pairs[k * BATCH:(k + 1) * BATCH], VIN, VOUT)

    start = time.process_time()
    if name == "rnn":
        model = Seq2Seq(VIN, VOUT, 64, score="additive", embedding=32)
        fit_seq2seq(model, batches, steps, lr=LR)
    else:
        norm, warm = name.split("/")
        model = transformer(layers, norm == "pre")
        w = WARMUP if warm == "warm-up" else 0
        fit_scheduled(model, batches, steps, loss=transformer_loss, lr=LR,
                      schedule=lambda k: linear_warmup_rate(k, steps, w))
    seconds = time.process_time() - start - eval_time
    curve[steps] = accuracy(model, probe)
    final = accuracy(model, test)
    reached = next((k for k, a in sorted(curve.items()) if a >= 0.97), None)
    year = year_attention(model, test, [s for s, _ in TEST])
    return dict(final=final, curve=curve, reached=reached, seconds=seconds,
                per_step=seconds / steps, year=year)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--models", nargs="+", default=["rnn", "pre/warm-up", "post/warm-up",
                                                        "pre/none", "post/none"])
    args = parser.parse_args()
    results: dict[str, list[dict]] = {name: [] for name in args.models}
    for seed in args.seeds:
        for name in args.models:
            r = run(name, seed, args.layers)
            results[name].append(r)
            curve = " ".join(f"{k}:{a:.3f}" for k, a in sorted(r["curve"].items()))
            print(f"seed {seed} {name:13s} exact {r['final']:.3f}  >=0.97 at step "
                  f"{r['reached']}  train {r['seconds']:5.1f} s  {1000 * r['per_step']:4.1f} "
                  f"ms/step  year attention {r['year']:.2f}  curve {curve}", flush=True)
    print(f"\nsummary over seeds {args.seeds} ({args.layers}+{args.layers} Transformer layers)")
    rnn_step = statistics.median(r["per_step"] for r in results.get("rnn", [])) \
        if "rnn" in results else None
    for name, rows in results.items():
        finals = [r["final"] for r in rows]
        reached = [r["reached"] for r in rows]
        per_step = statistics.median(r["per_step"] for r in rows)
        total = statistics.median(r["seconds"] for r in rows)
        ratio = f", {per_step / rnn_step:4.2f}x the RNN's time per step" if rnn_step else ""
        years = min(r["year"] for r in rows)
        print(f"{name:13s} exact mean {statistics.mean(finals):.3f} min {min(finals):.3f} "
              f"max {max(finals):.3f}; first >= 0.97 at steps {reached}; median train "
              f"{total:5.1f} s, {1000 * per_step:4.1f} ms/step{ratio}; year attention of "
              f"the best head >= {years:.2f}")


if __name__ == "__main__":
    main()
