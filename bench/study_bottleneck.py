"""Multi-seed study of the fixed-size-code bottleneck (chapter seq2seq): accuracy against input length.

Task: reverse random strings of length 5-20 over 26 letters (``seqlearn.data.string_pairs``;
lengths 5-40 do not train within a chapter's budget). Model: ``seqlearn.seq2seq.Seq2Seq``
without attention (the code ``c`` enters every decoder step), hidden 64 (the code's size),
embeddings 32, trained with teacher forcing on batches of 64 fresh strings, Adam with learning
rate 1e-2 decaying linearly to 0, gradient clipping at 1, 300 steps. Evaluation on 1000 fixed
test strings (seed 2024): exact match of the greedy output and teacher-forced character
accuracy (the ``<eos>`` counts as a character), per bucket of input lengths. A configuration is
``encoder:init[:hidden]``: encoder ``uni`` or ``bi`` (each direction hidden/2, the same code
size), the initial decoder state, one of ``seqlearn.seq2seq.INITS``, and optionally its own
``hidden`` (the code's size and the decoder's width; default ``--hidden``). ``--score`` adds
attention; ``--per-length`` also prints exact match per input length and the *usable length*.

    .venv/bin/python bench/study_bottleneck.py          # the chapter's setting, 5 seeds, ~4 min
    .venv/bin/python bench/study_bottleneck.py --configs uni:learned:64 bi:learned:128 \
        uni:learned:128 --test 2000 --per-length       # two vectors of 64, ~2.5 min

Seed 0 of ``uni:learned``, ``bi:learned``, ``bi:zero`` and ``bi:last`` is exactly what the
chapter trains (same seeding), so the chapter's numbers are the seed-0 lines below. Prints one
line per (configuration, seed, metric), then the mean [min, max] over seeds and every ordering
of two configurations that held in every seed (paired by seed) in a bucket: the only kind of
claim the chapter makes. Output of the first command above (2 shared CPU cores, one thread)::

    uni:learned   seed 0 exact: 5-8 0.357  9-12 0.008  13-16 0.000  17-20 0.000  all 0.098
    uni:learned   seed 0 chars: 5-8 0.848  9-12 0.661  13-16 0.535  17-20 0.440  all 0.577
    uni:learned   seed 1 exact: 5-8 0.297  9-12 0.012  13-16 0.000  17-20 0.000  all 0.083
    uni:learned   seed 1 chars: 5-8 0.840  9-12 0.656  13-16 0.521  17-20 0.433  all 0.569
    uni:learned   seed 2 exact: 5-8 0.323  9-12 0.008  13-16 0.000  17-20 0.000  all 0.089
    uni:learned   seed 2 chars: 5-8 0.839  9-12 0.667  13-16 0.516  17-20 0.427  all 0.567
    uni:learned   seed 3 exact: 5-8 0.320  9-12 0.037  13-16 0.000  17-20 0.000  all 0.095
    uni:learned   seed 3 chars: 5-8 0.844  9-12 0.670  13-16 0.520  17-20 0.437  all 0.573
    uni:learned   seed 4 exact: 5-8 0.338  9-12 0.012  13-16 0.000  17-20 0.000  all 0.094
    uni:learned   seed 4 chars: 5-8 0.853  9-12 0.673  13-16 0.526  17-20 0.441  all 0.579
    bi:learned    seed 0 exact: 5-8 0.335  9-12 0.012  13-16 0.000  17-20 0.000  all 0.093
    bi:learned    seed 0 chars: 5-8 0.862  9-12 0.695  13-16 0.562  17-20 0.477  all 0.608
    bi:learned    seed 1 exact: 5-8 0.368  9-12 0.020  13-16 0.000  17-20 0.000  all 0.104
    bi:learned    seed 1 chars: 5-8 0.869  9-12 0.689  13-16 0.548  17-20 0.473  all 0.602
    bi:learned    seed 2 exact: 5-8 0.327  9-12 0.012  13-16 0.000  17-20 0.000  all 0.091
    bi:learned    seed 2 chars: 5-8 0.861  9-12 0.695  13-16 0.574  17-20 0.469  all 0.608
    bi:learned    seed 3 exact: 5-8 0.335  9-12 0.016  13-16 0.000  17-20 0.000  all 0.094
    bi:learned    seed 3 chars: 5-8 0.847  9-12 0.683  13-16 0.546  17-20 0.463  all 0.593
    bi:learned    seed 4 exact: 5-8 0.305  9-12 0.008  13-16 0.000  17-20 0.000  all 0.084
    bi:learned    seed 4 chars: 5-8 0.845  9-12 0.682  13-16 0.557  17-20 0.476  all 0.600
    bi:zero       seed 0 exact: 5-8 0.182  9-12 0.000  13-16 0.000  17-20 0.000  all 0.049
    bi:zero       seed 0 chars: 5-8 0.768  9-12 0.607  13-16 0.475  17-20 0.395  all 0.521
    bi:zero       seed 1 exact: 5-8 0.245  9-12 0.008  13-16 0.000  17-20 0.000  all 0.068
    bi:zero       seed 1 chars: 5-8 0.788  9-12 0.612  13-16 0.479  17-20 0.400  all 0.528
    bi:zero       seed 2 exact: 5-8 0.208  9-12 0.008  13-16 0.000  17-20 0.000  all 0.058
    bi:zero       seed 2 chars: 5-8 0.770  9-12 0.614  13-16 0.483  17-20 0.405  all 0.529
    bi:zero       seed 3 exact: 5-8 0.186  9-12 0.000  13-16 0.000  17-20 0.000  all 0.050
    bi:zero       seed 3 chars: 5-8 0.771  9-12 0.603  13-16 0.474  17-20 0.393  all 0.520
    bi:zero       seed 4 exact: 5-8 0.193  9-12 0.000  13-16 0.000  17-20 0.000  all 0.052
    bi:zero       seed 4 chars: 5-8 0.772  9-12 0.607  13-16 0.482  17-20 0.400  all 0.525
    bi:last       seed 0 exact: 5-8 0.249  9-12 0.004  13-16 0.000  17-20 0.000  all 0.068
    bi:last       seed 0 chars: 5-8 0.814  9-12 0.650  13-16 0.519  17-20 0.443  all 0.566
    bi:last       seed 1 exact: 5-8 0.290  9-12 0.008  13-16 0.000  17-20 0.000  all 0.080
    bi:last       seed 1 chars: 5-8 0.836  9-12 0.657  13-16 0.528  17-20 0.442  all 0.574
    bi:last       seed 2 exact: 5-8 0.223  9-12 0.004  13-16 0.000  17-20 0.000  all 0.061
    bi:last       seed 2 chars: 5-8 0.811  9-12 0.648  13-16 0.532  17-20 0.435  all 0.567
    bi:last       seed 3 exact: 5-8 0.249  9-12 0.012  13-16 0.000  17-20 0.000  all 0.070
    bi:last       seed 3 chars: 5-8 0.821  9-12 0.667  13-16 0.526  17-20 0.453  all 0.577
    bi:last       seed 4 exact: 5-8 0.257  9-12 0.008  13-16 0.000  17-20 0.000  all 0.071
    bi:last       seed 4 chars: 5-8 0.829  9-12 0.655  13-16 0.532  17-20 0.442  all 0.573
    bi:mean       seed 0 exact: 5-8 0.238  9-12 0.004  13-16 0.000  17-20 0.000  all 0.065
    bi:mean       seed 0 chars: 5-8 0.812  9-12 0.632  13-16 0.505  17-20 0.408  all 0.546
    bi:mean       seed 1 exact: 5-8 0.301  9-12 0.000  13-16 0.000  17-20 0.000  all 0.081
    bi:mean       seed 1 chars: 5-8 0.834  9-12 0.647  13-16 0.502  17-20 0.408  all 0.552
    bi:mean       seed 2 exact: 5-8 0.283  9-12 0.008  13-16 0.000  17-20 0.000  all 0.078
    bi:mean       seed 2 chars: 5-8 0.819  9-12 0.632  13-16 0.507  17-20 0.413  all 0.550
    bi:mean       seed 3 exact: 5-8 0.268  9-12 0.008  13-16 0.000  17-20 0.000  all 0.074
    bi:mean       seed 3 chars: 5-8 0.805  9-12 0.625  13-16 0.485  17-20 0.416  all 0.540
    bi:mean       seed 4 exact: 5-8 0.290  9-12 0.008  13-16 0.000  17-20 0.000  all 0.080
    bi:mean       seed 4 chars: 5-8 0.816  9-12 0.639  13-16 0.494  17-20 0.398  all 0.542
    bi:parameter  seed 0 exact: 5-8 0.216  9-12 0.004  13-16 0.000  17-20 0.000  all 0.059
    bi:parameter  seed 0 chars: 5-8 0.781  9-12 0.616  13-16 0.484  17-20 0.410  all 0.532
    bi:parameter  seed 1 exact: 5-8 0.238  9-12 0.008  13-16 0.000  17-20 0.000  all 0.066
    bi:parameter  seed 1 chars: 5-8 0.802  9-12 0.612  13-16 0.486  17-20 0.410  all 0.536
    bi:parameter  seed 2 exact: 5-8 0.242  9-12 0.008  13-16 0.000  17-20 0.000  all 0.067
    bi:parameter  seed 2 chars: 5-8 0.789  9-12 0.624  13-16 0.494  17-20 0.413  all 0.540
    bi:parameter  seed 3 exact: 5-8 0.190  9-12 0.004  13-16 0.000  17-20 0.000  all 0.052
    bi:parameter  seed 3 chars: 5-8 0.775  9-12 0.614  13-16 0.487  17-20 0.402  all 0.529
    bi:parameter  seed 4 exact: 5-8 0.216  9-12 0.004  13-16 0.000  17-20 0.000  all 0.059
    bi:parameter  seed 4 chars: 5-8 0.789  9-12 0.619  13-16 0.490  17-20 0.410  all 0.536
    held in every seed (exact):
    held in every seed (chars):

    exact: mean [min, max] over seeds [0, 1, 2, 3, 4]
    uni:learned   5-8 0.327 [0.297, 0.357]  9-12 0.015 [0.008, 0.037]  13-16 0.000 [0.000, 0.000]  17-20 0.000 [0.000, 0.000]  all 0.092 [0.083, 0.098]
    bi:learned    5-8 0.334 [0.305, 0.368]  9-12 0.014 [0.008, 0.020]  13-16 0.000 [0.000, 0.000]  17-20 0.000 [0.000, 0.000]  all 0.093 [0.084, 0.104]
    bi:zero       5-8 0.203 [0.182, 0.245]  9-12 0.003 [0.000, 0.008]  13-16 0.000 [0.000, 0.000]  17-20 0.000 [0.000, 0.000]  all 0.055 [0.049, 0.068]
    bi:last       5-8 0.254 [0.223, 0.290]  9-12 0.007 [0.004, 0.012]  13-16 0.000 [0.000, 0.000]  17-20 0.000 [0.000, 0.000]  all 0.070 [0.061, 0.080]
    bi:mean       5-8 0.276 [0.238, 0.301]  9-12 0.006 [0.000, 0.008]  13-16 0.000 [0.000, 0.000]  17-20 0.000 [0.000, 0.000]  all 0.076 [0.065, 0.081]
    bi:parameter  5-8 0.220 [0.190, 0.242]  9-12 0.006 [0.004, 0.008]  13-16 0.000 [0.000, 0.000]  17-20 0.000 [0.000, 0.000]  all 0.061 [0.052, 0.067]
    held in every seed (exact):
      uni:learned > bi:zero in buckets ['5-8', 'all']
      uni:learned > bi:last in buckets ['5-8', '9-12', 'all']
      uni:learned > bi:mean in buckets ['all']
      uni:learned > bi:parameter in buckets ['5-8', 'all']
      bi:learned > bi:zero in buckets ['5-8', '9-12', 'all']
      bi:learned > bi:last in buckets ['5-8', 'all']
      bi:learned > bi:mean in buckets ['5-8', 'all']
      bi:learned > bi:parameter in buckets ['5-8', '9-12', 'all']
      bi:last > bi:zero in buckets ['5-8', 'all']
      bi:mean > bi:zero in buckets ['5-8', 'all']
      bi:mean > bi:parameter in buckets ['5-8', 'all']
      uni:learned: never rises with length in any seed: True
      bi:learned: never rises with length in any seed: True
      bi:zero: never rises with length in any seed: True
      bi:last: never rises with length in any seed: True
      bi:mean: never rises with length in any seed: True
      bi:parameter: never rises with length in any seed: True
    
    chars: mean [min, max] over seeds [0, 1, 2, 3, 4]
    uni:learned   5-8 0.845 [0.839, 0.853]  9-12 0.665 [0.656, 0.673]  13-16 0.523 [0.516, 0.535]  17-20 0.436 [0.427, 0.441]  all 0.573 [0.567, 0.579]
    bi:learned    5-8 0.857 [0.845, 0.869]  9-12 0.689 [0.682, 0.695]  13-16 0.558 [0.546, 0.574]  17-20 0.472 [0.463, 0.477]  all 0.602 [0.593, 0.608]
    bi:zero       5-8 0.774 [0.768, 0.788]  9-12 0.609 [0.603, 0.614]  13-16 0.479 [0.474, 0.483]  17-20 0.399 [0.393, 0.405]  all 0.525 [0.520, 0.529]
    bi:last       5-8 0.822 [0.811, 0.836]  9-12 0.656 [0.648, 0.667]  13-16 0.528 [0.519, 0.532]  17-20 0.443 [0.435, 0.453]  all 0.571 [0.566, 0.577]
    bi:mean       5-8 0.817 [0.805, 0.834]  9-12 0.635 [0.625, 0.647]  13-16 0.499 [0.485, 0.507]  17-20 0.409 [0.398, 0.416]  all 0.546 [0.540, 0.552]
    bi:parameter  5-8 0.788 [0.775, 0.802]  9-12 0.617 [0.612, 0.624]  13-16 0.488 [0.484, 0.494]  17-20 0.409 [0.402, 0.413]  all 0.535 [0.529, 0.540]
    held in every seed (chars):
      uni:learned > bi:zero in buckets ['5-8', '9-12', '13-16', '17-20', 'all']
      uni:learned > bi:last in buckets ['5-8']
      uni:learned > bi:mean in buckets ['5-8', '9-12', '13-16', '17-20', 'all']
      uni:learned > bi:parameter in buckets ['5-8', '9-12', '13-16', '17-20', 'all']
      bi:learned > uni:learned in buckets ['9-12', '13-16', '17-20', 'all']
      bi:learned > bi:zero in buckets ['5-8', '9-12', '13-16', '17-20', 'all']
      bi:learned > bi:last in buckets ['5-8', '9-12', '13-16', '17-20', 'all']
      bi:learned > bi:mean in buckets ['5-8', '9-12', '13-16', '17-20', 'all']
      bi:learned > bi:parameter in buckets ['5-8', '9-12', '13-16', '17-20', 'all']
      bi:last > uni:learned in buckets ['17-20']
      bi:last > bi:zero in buckets ['5-8', '9-12', '13-16', '17-20', 'all']
      bi:last > bi:mean in buckets ['9-12', '13-16', '17-20', 'all']
      bi:last > bi:parameter in buckets ['5-8', '9-12', '13-16', '17-20', 'all']
      bi:mean > bi:zero in buckets ['5-8', '9-12', '13-16', 'all']
      bi:mean > bi:parameter in buckets ['5-8', '9-12', 'all']
      bi:parameter > bi:zero in buckets ['5-8', '9-12', '13-16', '17-20', 'all']
      uni:learned: never rises with length in any seed: True
      bi:learned: never rises with length in any seed: True
      bi:zero: never rises with length in any seed: True
      bi:last: never rises with length in any seed: True
      bi:mean: never rises with length in any seed: True
      bi:parameter: never rises with length in any seed: True

The second command tests the NYU notes' claim that a bidirectional encoder, which encodes the
meaning in two vectors, doubles the usable sentence length. ``bi:learned:128`` gives each
direction 64 units, so its code holds two vectors of 64 numbers (and the decoder has 128
units); ``uni:learned:64`` is the chapter's unidirectional model and ``uni:learned:128`` a
control with one code of 128 numbers. The usable length is the longest length ``n`` such that
exact match is at least 0.5 (or 0.25) at every length up to ``n``, on 2000 test strings (about
125 per length). Its output, the per-length part (2 shared CPU cores, one thread, 2 min 20 s
of CPU time)::

    exact match per input length    5    6    7    8    9   10   11   12   13   14 ...   20
    uni:learned:64   seed 0      0.56 0.45 0.22 0.16 0.05 0.00 0.00 0.00 0.00 0.00 ... 0.00
    uni:learned:64   seed 1      0.63 0.47 0.28 0.11 0.01 0.00 0.00 0.00 0.00 0.00 ... 0.00
    uni:learned:64   seed 2      0.59 0.41 0.27 0.06 0.02 0.00 0.00 0.00 0.00 0.00 ... 0.00
    uni:learned:64   seed 3      0.60 0.44 0.29 0.09 0.06 0.01 0.00 0.00 0.00 0.00 ... 0.00
    uni:learned:64   seed 4      0.68 0.46 0.22 0.13 0.04 0.01 0.00 0.00 0.00 0.00 ... 0.00
    bi:learned:128   seed 0      0.88 0.81 0.60 0.33 0.14 0.07 0.04 0.00 0.01 0.00 ... 0.00
    bi:learned:128   seed 1      0.92 0.83 0.53 0.33 0.19 0.09 0.01 0.02 0.00 0.00 ... 0.00
    bi:learned:128   seed 2      0.91 0.75 0.59 0.38 0.15 0.03 0.02 0.02 0.00 0.00 ... 0.00
    bi:learned:128   seed 3      0.89 0.73 0.56 0.35 0.21 0.04 0.07 0.01 0.00 0.00 ... 0.00
    bi:learned:128   seed 4      0.85 0.84 0.66 0.43 0.14 0.08 0.03 0.00 0.00 0.00 ... 0.00
    uni:learned:128  seed 0      0.91 0.82 0.66 0.45 0.19 0.16 0.06 0.02 0.01 0.00 ... 0.00
    uni:learned:128  seed 1      0.92 0.76 0.66 0.46 0.17 0.09 0.03 0.02 0.00 0.00 ... 0.00
    uni:learned:128  seed 2      0.90 0.82 0.54 0.40 0.18 0.13 0.03 0.00 0.00 0.00 ... 0.00
    uni:learned:128  seed 3      0.82 0.84 0.63 0.38 0.24 0.07 0.02 0.02 0.00 0.01 ... 0.00
    uni:learned:128  seed 4      0.86 0.74 0.60 0.43 0.19 0.08 0.03 0.02 0.00 0.00 ... 0.00
    usable length (exact match >= 0.5 at every length up to it), per seed [0, 1, 2, 3, 4]:
      uni:learned:64     5   5   5   5   5
      bi:learned:128     7   7   7   7   7
      uni:learned:128    7   7   7   7   7
    usable length (exact match >= 0.25 at every length up to it), per seed [0, 1, 2, 3, 4]:
      uni:learned:64     6   7   7   7   6
      bi:learned:128     8   8   8   8   8
      uni:learned:128    8   8   8   8   8

(The columns 15-19 are 0.00 everywhere and are cut here.) Character accuracy, mean over seeds
per bucket 5-8 / 9-12 / 13-16 / 17-20: uni:learned:64 0.854 / 0.660 / 0.526 / 0.434,
bi:learned:128 0.941 / 0.799 / 0.668 / 0.563, uni:learned:128 0.948 / 0.807 / 0.663 / 0.555.
Two vectors of 64 numbers lengthen the usable length from 5 to 7 letters (0.5) or from 6-7 to
8 (0.25) in every seed, not to twice the length; one vector of 128 numbers does the same, so
at this budget the gain comes from the size of the code, not from reading in two directions.

Under the perturbed numerics (`make study-perturbed STUDY=bench/study_bottleneck.py`; output in
bench/results/study_bottleneck.perturbed.txt; 14 min 44 s of CPU time, the scalar kernels being
slower): every per-seed figure of the first command equals the native one above to three
decimals, except bi:learned seed 4's overall character accuracy (0.601 instead of 0.600); the
means, ranges and every ordering that held in every seed are unchanged. The second command
(ARGS="--configs uni:learned:64 bi:learned:128 uni:learned:128 --test 2000 --per-length";
bench/results/study_bottleneck.two_vectors.perturbed.txt; 15 min 1 s of CPU time): the
per-length table equals the one above except uni:learned:128 seed 3 at length 7 (0.64 instead of
0.63), and the usable lengths are the same in every seed (5, 7, 7 at 0.5; 6-7, 8, 8 at 0.25).
So the chapter's ranges hold under both numerics.

The CMU 11-785 notes' fourth initial state, ``bi:learned_mean`` (``s_0 = tanh(W_s mean_i h_i +
b_s)``), was run later next to the rules it is compared with (2 shared CPU cores, about 40 s per
configuration and seed; output in bench/results/study_bottleneck.learned_mean.native.txt)::

    .venv/bin/python bench/study_bottleneck.py --configs bi:learned_mean bi:learned \
        bi:mean bi:last bi:zero

The four other configurations reproduce their lines above digit for digit. The new ones::

    bi:learned_mean seed 0 chars: 5-8 0.884  9-12 0.696  13-16 0.525  17-20 0.439  all 0.587
    bi:learned_mean seed 1 chars: 5-8 0.886  9-12 0.693  13-16 0.537  17-20 0.443  all 0.592
    bi:learned_mean seed 2 chars: 5-8 0.876  9-12 0.690  13-16 0.541  17-20 0.448  all 0.593
    bi:learned_mean seed 3 chars: 5-8 0.874  9-12 0.683  13-16 0.538  17-20 0.445  all 0.589
    bi:learned_mean seed 4 chars: 5-8 0.884  9-12 0.681  13-16 0.541  17-20 0.449  all 0.592
    exact, mean [min, max]: 5-8 0.439 [0.398, 0.461]  9-12 0.015 [0.008, 0.024]  13-20 0.000
    held in every seed (chars):
      bi:learned_mean > bi:learned in buckets ['5-8']
      bi:learned > bi:learned_mean in buckets ['13-16', '17-20', 'all']
      bi:learned_mean > bi:mean and > bi:zero in every bucket
      bi:learned_mean > bi:last in buckets ['5-8', '9-12', '13-16', 'all']
    held in every seed (exact): bi:learned_mean > each other rule in buckets ['5-8', 'all']

Per seed, the map of the mean leads the map of the code by 0.015 to 0.039 at 5-8 letters and
trails it by 0.008 to 0.038 at 13-16 and 17-20; it leads the zero state by 0.043 to 0.116 in
every bucket (the chapter asserts more than 0.03). Under the perturbed numerics (``make
study-perturbed STUDY=bench/study_bottleneck.py ARGS="--configs bi:learned_mean"``; output in
bench/results/study_bottleneck.learned_mean.perturbed.txt) every ``bi:learned_mean`` line equals
the native one, and the other rules' perturbed lines are those of the first command, so these
ranges hold under both numerics.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import torch

from seqlearn.data import LETTERS, Vocab, seq2seq_batch, string_pairs
from seqlearn.seeding import seed_all
from seqlearn.seq2seq import Seq2Seq, greedy_exact_match
from seqlearn.train import fit_seq2seq

BUCKETS = ((5, 8), (9, 12), (13, 16), (17, 20))
TEST_SEED = 2024
LENGTHS = np.arange(5, 21)


def run(config: str, seed: int, args: argparse.Namespace
        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Exact match and teacher-forced character accuracy per bucket (plus overall, last),
    then the same two per single input length ``5 .. 20``."""
    encoder, init, *size = config.split(":")
    hidden = int(size[0]) if size else args.hidden
    seed_all(seed)
    vocab = Vocab(LETTERS)
    rng = np.random.default_rng(seed)
    model = Seq2Seq(vocab, vocab, hidden, embedding=args.embedding, init=init,
                    bidirectional=encoder == "bi", score=args.score)
    fit_seq2seq(model, lambda step: seq2seq_batch(string_pairs(args.batch, rng), vocab, vocab),
                args.steps, lr=args.lr, decay=args.decay)
    test = seq2seq_batch(string_pairs(args.test, np.random.default_rng(TEST_SEED)), vocab, vocab)
    ok = greedy_exact_match(model, test).double()  # (N,)
    with torch.no_grad():
        logits, _ = model(test.src, test.src_lengths, test.tgt_in)
    hits = ((logits.argmax(-1) == test.tgt_out) & test.tgt_mask).sum(1).double()  # (N,)
    chars = test.tgt_mask.sum(1).double()  # (N,): L + 1 (the <eos> counts)
    L = test.src_lengths
    rows = [(L >= lo) & (L <= hi) for lo, hi in BUCKETS] + [L > 0]
    single = [L == n for n in LENGTHS]
    return (np.array([float(ok[r].mean()) for r in rows]),
            np.array([float(hits[r].sum() / chars[r].sum()) for r in rows]),
            np.array([float(ok[r].mean()) for r in single]),
            np.array([float(hits[r].sum() / chars[r].sum()) for r in single]))


def usable_length(per_length: np.ndarray, threshold: float) -> int:
    """The longest length ``n`` such that every length up to ``n`` reaches ``threshold``
    (``4`` when even the shortest does not)."""
    below = np.flatnonzero(per_length < threshold)
    return int(LENGTHS[below[0]] - 1) if len(below) else int(LENGTHS[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", nargs="+", default=[
        "uni:learned", "bi:learned", "bi:zero", "bi:last", "bi:mean", "bi:parameter"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--embedding", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--test", type=int, default=1000)
    parser.add_argument("--score", default=None)
    parser.add_argument("--decay", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--per-length", action="store_true",
                        help="also print exact match per input length and the usable length")
    args = parser.parse_args()
    print(f"settings: {vars(args)}")
    heads = [f"{lo}-{hi}" for lo, hi in BUCKETS] + ["all"]
    metrics = ("exact", "chars")
    results: dict[str, dict[str, np.ndarray]] = {}
    lengths: dict[str, list[np.ndarray]] = {}
    for config in args.configs:
        rows, lengths[config] = [], []
        for seed in args.seeds:
            start = time.perf_counter()
            *buckets, exact_by_length, _ = run(config, seed, args)
            rows.append(buckets)
            lengths[config].append(exact_by_length)
            for name, values in zip(metrics, rows[-1]):
                print(f"{config:13s} seed {seed} {name:5s}: "
                      + "  ".join(f"{h} {v:.3f}" for h, v in zip(heads, values)), flush=True)
            print(f"    ({time.perf_counter() - start:.0f} s)", flush=True)
        results[config] = {m: np.array([r[k] for r in rows]) for k, m in enumerate(metrics)}
    for metric in metrics:
        print(f"\n{metric}: mean [min, max] over seeds {args.seeds}")
        for config, r in results.items():
            x = r[metric]  # (seeds, buckets + 1)
            print(f"{config:13s} " + "  ".join(
                f"{h} {m:.3f} [{lo:.3f}, {hi:.3f}]"
                for h, m, lo, hi in zip(heads, x.mean(0), x.min(0), x.max(0))))
        print(f"held in every seed ({metric}):")
        for a, b in itertools.permutations(results, 2):
            wins = [h for k, h in enumerate(heads)
                    if (results[a][metric][:, k] > results[b][metric][:, k]).all()]
            if wins:
                print(f"  {a} > {b} in buckets {wins}")
        for config, r in results.items():
            falls = all((np.diff(row[: len(BUCKETS)]) <= 0).all() for row in r[metric])
            print(f"  {config}: never rises with length in any seed: {falls}")
    if args.per_length:
        print("\nexact match per input length " + " ".join(f"{n:>4}" for n in LENGTHS))
        for config, per_seed in lengths.items():
            for seed, row in zip(args.seeds, per_seed):
                print(f"{config:16s} seed {seed:<6} " + " ".join(f"{m:4.2f}" for m in row))
        for threshold in (0.5, 0.25):
            print(f"usable length (exact match >= {threshold} at every length up to it), "
                  f"per seed {args.seeds}:")
            for config, per_seed in lengths.items():
                print(f"  {config:16s} " + " ".join(
                    f"{usable_length(row, threshold):3d}" for row in per_seed))


if __name__ == "__main__":
    main()
