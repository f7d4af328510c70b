"""Greedy decoding against beam search (beam sizes 1-8) on dates and reversed strings.

    .venv/bin/python bench/study_decoding.py                     # 5 seeds x 3 settings
    .venv/bin/python bench/study_decoding.py --seeds 0 1 --cases reverse-200

The model is the decoding chapter's: the attention seq2seq of the attention chapter
(bidirectional GRU encoder 2 x 32 units, GRU decoder of 64 units, embeddings of 32, the
dot score of Luong et al. 2015), batches of 64 fresh examples, Adam 5e-3, gradients
clipped to norm 1, a fixed number of steps. Training data come from ``numpy.random.default_rng(seed)``, the weights
from ``seed_all(seed)``; every seed sees the same 500 test examples
(``default_rng(10_000)``). Settings: ``dates-75`` and ``dates-150`` (human-readable date ->
ISO date after 75 or 150 steps), ``reverse-200`` (reverse 5-20 random letters, 200 steps).

Each trained model decodes the test set with beam sizes K = 1 (greedy) to 8 and length
penalty alpha = 0 (rank by log p(y|x)) and alpha = 1 (by log p / |y|); for every (K, alpha)
it measures exact match, corpus BLEU over characters (sacrebleu), the character error rate,
the mean log p of the outputs, their total length over the references' and the search
errors: outputs that are wrong although the model gives the reference a higher
probability (an exhaustive search would not have returned them). Per seed it prints some at
K = 1, 2, 8 and how many test outputs K = 8 fixes and breaks against greedy decoding (and
how many of the broken ones are longer than their reference); then mean +- sd over seeds
for every K, and in how many seeds each beam size beats greedy decoding (in exact match,
BLEU, CER and the mean log p of its outputs) and in how many its exact match is lower.

Measured on the book's 2-core machine (machine B; torch 2.13.0+cpu, one thread), seeds 0-4,
the default command (253 s of CPU on the shared machine; output also in
bench/results/study_decoding.native.txt):

    attention seq2seq (dot score), biGRU 2x32 + GRU 64, batch 64, Adam 0.005, clip 1; test: 500 examples; seeds [0, 1, 2, 3, 4]

    === dates-75: per seed, greedy -> K = 2 -> K = 8 ===
    seed 0 alpha 0: exact 0.782 0.794 0.794, CER 0.0346 0.0314 0.0314, log p -0.991 -0.974, search errors 0.024 0.000; K = 8 fixes 11, breaks 5 (0 longer)
    seed 0 alpha 1: exact 0.782 0.794 0.794, CER 0.0346 0.0314 0.0314, log p -0.991 -0.974, search errors 0.024 0.000; K = 8 fixes 11, breaks 5 (0 longer)
    seed 1 alpha 0: exact 0.632 0.660 0.660, CER 0.0640 0.0568 0.0568, log p -1.032 -1.018, search errors 0.036 0.000; K = 8 fixes 16, breaks 2 (0 longer)
    seed 1 alpha 1: exact 0.632 0.660 0.660, CER 0.0640 0.0568 0.0568, log p -1.032 -1.018, search errors 0.036 0.000; K = 8 fixes 16, breaks 2 (0 longer)
    seed 2 alpha 0: exact 0.750 0.764 0.764, CER 0.0432 0.0370 0.0370, log p -0.791 -0.784, search errors 0.018 0.000; K = 8 fixes 9, breaks 2 (0 longer)
    seed 2 alpha 1: exact 0.750 0.764 0.764, CER 0.0432 0.0370 0.0370, log p -0.791 -0.784, search errors 0.018 0.000; K = 8 fixes 9, breaks 2 (0 longer)
    seed 3 alpha 0: exact 0.822 0.848 0.850, CER 0.0364 0.0274 0.0270, log p -0.897 -0.873, search errors 0.046 0.000; K = 8 fixes 16, breaks 2 (0 longer)
    seed 3 alpha 1: exact 0.822 0.848 0.850, CER 0.0364 0.0274 0.0270, log p -0.897 -0.873, search errors 0.046 0.000; K = 8 fixes 16, breaks 2 (0 longer)
    seed 4 alpha 0: exact 0.858 0.866 0.866, CER 0.0234 0.0224 0.0224, log p -0.588 -0.586, search errors 0.008 0.000; K = 8 fixes 4, breaks 0 (0 longer)
    seed 4 alpha 1: exact 0.858 0.866 0.866, CER 0.0234 0.0224 0.0224, log p -0.588 -0.586, search errors 0.008 0.000; K = 8 fixes 4, breaks 0 (0 longer)

    dates-75, alpha = 0: mean ± sd over 5 seeds; wins = seeds where K beats greedy (exact / BLEU / CER / log p), worse = seeds where its exact match is lower
    | K | exact match | BLEU | CER | log p | length | search errors | wins |
    |---:|---:|---:|---:|---:|---:|---:|---:|
    | 1 | 0.769 ± 0.087 | 92.16 ± 3.16 | 0.040 ± 0.015 | -0.860 ± 0.178 | 1.000 ± 0.000 | 0.026 ± 0.015 | 0/0/0/0 (0 worse) |
    | 2 | 0.786 ± 0.082 | 92.90 ± 2.90 | 0.035 ± 0.013 | -0.847 ± 0.172 | 1.000 ± 0.000 | 0.001 ± 0.002 | 5/5/5/5 (0 worse) |
    | 3 | 0.787 ± 0.082 | 92.92 ± 2.92 | 0.035 ± 0.013 | -0.847 ± 0.172 | 1.000 ± 0.000 | 0.000 ± 0.000 | 5/5/5/5 (0 worse) |
    | 4 | 0.787 ± 0.082 | 92.92 ± 2.92 | 0.035 ± 0.013 | -0.847 ± 0.172 | 1.000 ± 0.000 | 0.000 ± 0.000 | 5/5/5/5 (0 worse) |
    | 5 | 0.787 ± 0.082 | 92.92 ± 2.92 | 0.035 ± 0.013 | -0.847 ± 0.172 | 1.000 ± 0.000 | 0.000 ± 0.000 | 5/5/5/5 (0 worse) |
    | 6 | 0.787 ± 0.082 | 92.92 ± 2.92 | 0.035 ± 0.013 | -0.847 ± 0.172 | 1.000 ± 0.000 | 0.000 ± 0.000 | 5/5/5/5 (0 worse) |
    | 7 | 0.787 ± 0.082 | 92.92 ± 2.92 | 0.035 ± 0.013 | -0.847 ± 0.172 | 1.000 ± 0.000 | 0.000 ± 0.000 | 5/5/5/5 (0 worse) |
    | 8 | 0.787 ± 0.082 | 92.92 ± 2.92 | 0.035 ± 0.013 | -0.847 ± 0.172 | 1.000 ± 0.000 | 0.000 ± 0.000 | 5/5/5/5 (0 worse) |

    dates-75, alpha = 1: mean ± sd over 5 seeds; wins = seeds where K beats greedy (exact / BLEU / CER / log p), worse = seeds where its exact match is lower
    | K | exact match | BLEU | CER | log p | length | search errors | wins |
    |---:|---:|---:|---:|---:|---:|---:|---:|
    | 1 | 0.769 ± 0.087 | 92.16 ± 3.16 | 0.040 ± 0.015 | -0.860 ± 0.178 | 1.000 ± 0.000 | 0.026 ± 0.015 | 0/0/0/0 (0 worse) |
    | 2 | 0.786 ± 0.082 | 92.90 ± 2.90 | 0.035 ± 0.013 | -0.847 ± 0.172 | 1.000 ± 0.000 | 0.001 ± 0.002 | 5/5/5/5 (0 worse) |
    | 3 | 0.787 ± 0.082 | 92.92 ± 2.92 | 0.035 ± 0.013 | -0.847 ± 0.172 | 1.000 ± 0.000 | 0.000 ± 0.000 | 5/5/5/5 (0 worse) |
    | 4 | 0.787 ± 0.082 | 92.92 ± 2.92 | 0.035 ± 0.013 | -0.847 ± 0.172 | 1.000 ± 0.000 | 0.000 ± 0.000 | 5/5/5/5 (0 worse) |
    | 5 | 0.787 ± 0.082 | 92.92 ± 2.92 | 0.035 ± 0.013 | -0.847 ± 0.172 | 1.000 ± 0.000 | 0.000 ± 0.000 | 5/5/5/5 (0 worse) |
    | 6 | 0.787 ± 0.082 | 92.92 ± 2.92 | 0.035 ± 0.013 | -0.847 ± 0.172 | 1.000 ± 0.000 | 0.000 ± 0.000 | 5/5/5/5 (0 worse) |
    | 7 | 0.787 ± 0.082 | 92.92 ± 2.92 | 0.035 ± 0.013 | -0.847 ± 0.172 | 1.000 ± 0.000 | 0.000 ± 0.000 | 5/5/5/5 (0 worse) |
    | 8 | 0.787 ± 0.082 | 92.92 ± 2.92 | 0.035 ± 0.013 | -0.847 ± 0.172 | 1.000 ± 0.000 | 0.000 ± 0.000 | 5/5/5/5 (0 worse) |

    === dates-150: per seed, greedy -> K = 2 -> K = 8 ===
    seed 0 alpha 0: exact 0.970 0.974 0.974, CER 0.0052 0.0042 0.0042, log p -0.119 -0.118, search errors 0.004 0.000; K = 8 fixes 2, breaks 0 (0 longer)
    seed 0 alpha 1: exact 0.970 0.974 0.974, CER 0.0052 0.0042 0.0042, log p -0.119 -0.118, search errors 0.004 0.000; K = 8 fixes 2, breaks 0 (0 longer)
    seed 1 alpha 0: exact 0.994 0.996 0.996, CER 0.0008 0.0006 0.0006, log p -0.125 -0.125, search errors 0.002 0.000; K = 8 fixes 1, breaks 0 (0 longer)
    seed 1 alpha 1: exact 0.994 0.996 0.996, CER 0.0008 0.0006 0.0006, log p -0.125 -0.125, search errors 0.002 0.000; K = 8 fixes 1, breaks 0 (0 longer)
    seed 2 alpha 0: exact 0.992 0.998 0.998, CER 0.0018 0.0002 0.0002, log p -0.110 -0.109, search errors 0.006 0.000; K = 8 fixes 3, breaks 0 (0 longer)
    seed 2 alpha 1: exact 0.992 0.998 0.998, CER 0.0018 0.0002 0.0002, log p -0.110 -0.109, search errors 0.006 0.000; K = 8 fixes 3, breaks 0 (0 longer)
    seed 3 alpha 0: exact 1.000 1.000 1.000, CER 0.0000 0.0000 0.0000, log p -0.068 -0.068, search errors 0.000 0.000; K = 8 fixes 0, breaks 0 (0 longer)
    seed 3 alpha 1: exact 1.000 1.000 1.000, CER 0.0000 0.0000 0.0000, log p -0.068 -0.068, search errors 0.000 0.000; K = 8 fixes 0, breaks 0 (0 longer)
    seed 4 alpha 0: exact 1.000 1.000 1.000, CER 0.0000 0.0000 0.0000, log p -0.080 -0.080, search errors 0.000 0.000; K = 8 fixes 0, breaks 0 (0 longer)
    seed 4 alpha 1: exact 1.000 1.000 1.000, CER 0.0000 0.0000 0.0000, log p -0.080 -0.080, search errors 0.000 0.000; K = 8 fixes 0, breaks 0 (0 longer)

    dates-150, alpha = 0: mean ± sd over 5 seeds; wins = seeds where K beats greedy (exact / BLEU / CER / log p), worse = seeds where its exact match is lower
    | K | exact match | BLEU | CER | log p | length | search errors | wins |
    |---:|---:|---:|---:|---:|---:|---:|---:|
    | 1 | 0.991 ± 0.012 | 99.74 ± 0.34 | 0.002 ± 0.002 | -0.101 ± 0.025 | 1.000 ± 0.000 | 0.002 ± 0.003 | 0/0/0/0 (0 worse) |
    | 2 | 0.994 ± 0.011 | 99.82 ± 0.30 | 0.001 ± 0.002 | -0.100 ± 0.025 | 1.000 ± 0.000 | 0.000 ± 0.000 | 3/3/3/3 (0 worse) |
    | 3 | 0.994 ± 0.011 | 99.82 ± 0.30 | 0.001 ± 0.002 | -0.100 ± 0.025 | 1.000 ± 0.000 | 0.000 ± 0.000 | 3/3/3/3 (0 worse) |
    | 4 | 0.994 ± 0.011 | 99.82 ± 0.30 | 0.001 ± 0.002 | -0.100 ± 0.025 | 1.000 ± 0.000 | 0.000 ± 0.000 | 3/3/3/3 (0 worse) |
    | 5 | 0.994 ± 0.011 | 99.82 ± 0.30 | 0.001 ± 0.002 | -0.100 ± 0.025 | 1.000 ± 0.000 | 0.000 ± 0.000 | 3/3/3/3 (0 worse) |
    | 6 | 0.994 ± 0.011 | 99.82 ± 0.30 | 0.001 ± 0.002 | -0.100 ± 0.025 | 1.000 ± 0.000 | 0.000 ± 0.000 | 3/3/3/3 (0 worse) |
    | 7 | 0.994 ± 0.011 | 99.82 ± 0.30 | 0.001 ± 0.002 | -0.100 ± 0.025 | 1.000 ± 0.000 | 0.000 ± 0.000 | 3/3/3/3 (0 worse) |
    | 8 | 0.994 ± 0.011 | 99.82 ± 0.30 | 0.001 ± 0.002 | -0.100 ± 0.025 | 1.000 ± 0.000 | 0.000 ± 0.000 | 3/3/3/3 (0 worse) |

    dates-150, alpha = 1: mean ± sd over 5 seeds; wins = seeds where K beats greedy (exact / BLEU / CER / log p), worse = seeds where its exact match is lower
    | K | exact match | BLEU | CER | log p | length | search errors | wins |
    |---:|---:|---:|---:|---:|---:|---:|---:|
    | 1 | 0.991 ± 0.012 | 99.74 ± 0.34 | 0.002 ± 0.002 | -0.101 ± 0.025 | 1.000 ± 0.000 | 0.002 ± 0.003 | 0/0/0/0 (0 worse) |
    | 2 | 0.994 ± 0.011 | 99.82 ± 0.30 | 0.001 ± 0.002 | -0.100 ± 0.025 | 1.000 ± 0.000 | 0.000 ± 0.000 | 3/3/3/3 (0 worse) |
    | 3 | 0.994 ± 0.011 | 99.82 ± 0.30 | 0.001 ± 0.002 | -0.100 ± 0.025 | 1.000 ± 0.000 | 0.000 ± 0.000 | 3/3/3/3 (0 worse) |
    | 4 | 0.994 ± 0.011 | 99.82 ± 0.30 | 0.001 ± 0.002 | -0.100 ± 0.025 | 1.000 ± 0.000 | 0.000 ± 0.000 | 3/3/3/3 (0 worse) |
    | 5 | 0.994 ± 0.011 | 99.82 ± 0.30 | 0.001 ± 0.002 | -0.100 ± 0.025 | 1.000 ± 0.000 | 0.000 ± 0.000 | 3/3/3/3 (0 worse) |
    | 6 | 0.994 ± 0.011 | 99.82 ± 0.30 | 0.001 ± 0.002 | -0.100 ± 0.025 | 1.000 ± 0.000 | 0.000 ± 0.000 | 3/3/3/3 (0 worse) |
    | 7 | 0.994 ± 0.011 | 99.82 ± 0.30 | 0.001 ± 0.002 | -0.100 ± 0.025 | 1.000 ± 0.000 | 0.000 ± 0.000 | 3/3/3/3 (0 worse) |
    | 8 | 0.994 ± 0.011 | 99.82 ± 0.30 | 0.001 ± 0.002 | -0.100 ± 0.025 | 1.000 ± 0.000 | 0.000 ± 0.000 | 3/3/3/3 (0 worse) |

    === reverse-200: per seed, greedy -> K = 2 -> K = 8 ===
    seed 0 alpha 0: exact 0.712 0.708 0.708, CER 0.0443 0.0459 0.0459, log p -2.179 -2.140, search errors 0.032 0.000; K = 8 fixes 9, breaks 11 (3 longer)
    seed 0 alpha 1: exact 0.712 0.716 0.714, CER 0.0443 0.0438 0.0433, log p -2.179 -2.152, search errors 0.032 0.010; K = 8 fixes 9, breaks 8 (4 longer)
    seed 1 alpha 0: exact 0.628 0.652 0.652, CER 0.0605 0.0543 0.0567, log p -2.685 -2.570, search errors 0.082 0.000; K = 8 fixes 29, breaks 17 (9 longer)
    seed 1 alpha 1: exact 0.628 0.656 0.650, CER 0.0605 0.0535 0.0545, log p -2.685 -2.583, search errors 0.082 0.026; K = 8 fixes 34, breaks 23 (18 longer)
    seed 2 alpha 0: exact 0.598 0.592 0.584, CER 0.0572 0.0567 0.0593, log p -2.685 -2.531, search errors 0.082 0.000; K = 8 fixes 28, breaks 35 (24 longer)
    seed 2 alpha 1: exact 0.598 0.588 0.586, CER 0.0572 0.0572 0.0584, log p -2.685 -2.549, search errors 0.082 0.016; K = 8 fixes 32, breaks 38 (29 longer)
    seed 3 alpha 0: exact 0.650 0.680 0.682, CER 0.0566 0.0516 0.0504, log p -2.592 -2.499, search errors 0.072 0.000; K = 8 fixes 29, breaks 13 (5 longer)
    seed 3 alpha 1: exact 0.650 0.662 0.654, CER 0.0566 0.0530 0.0529, log p -2.592 -2.521, search errors 0.072 0.040; K = 8 fixes 22, breaks 20 (15 longer)
    seed 4 alpha 0: exact 0.722 0.750 0.752, CER 0.0445 0.0388 0.0394, log p -2.291 -2.220, search errors 0.058 0.000; K = 8 fixes 23, breaks 8 (1 longer)
    seed 4 alpha 1: exact 0.722 0.742 0.746, CER 0.0445 0.0393 0.0401, log p -2.291 -2.232, search errors 0.058 0.016; K = 8 fixes 24, breaks 12 (5 longer)

    reverse-200, alpha = 0: mean ± sd over 5 seeds; wins = seeds where K beats greedy (exact / BLEU / CER / log p), worse = seeds where its exact match is lower
    | K | exact match | BLEU | CER | log p | length | search errors | wins |
    |---:|---:|---:|---:|---:|---:|---:|---:|
    | 1 | 0.662 ± 0.054 | 91.22 ± 1.67 | 0.053 ± 0.008 | -2.486 ± 0.236 | 0.997 ± 0.008 | 0.065 ± 0.021 | 0/0/0/0 (0 worse) |
    | 2 | 0.676 ± 0.059 | 91.84 ± 1.62 | 0.049 ± 0.007 | -2.412 ± 0.205 | 0.996 ± 0.006 | 0.009 ± 0.005 | 3/4/4/5 (2 worse) |
    | 3 | 0.675 ± 0.061 | 91.82 ± 1.68 | 0.050 ± 0.008 | -2.400 ± 0.201 | 0.995 ± 0.005 | 0.004 ± 0.002 | 3/4/3/5 (2 worse) |
    | 4 | 0.676 ± 0.062 | 91.74 ± 1.71 | 0.050 ± 0.008 | -2.395 ± 0.199 | 0.994 ± 0.005 | 0.000 ± 0.001 | 3/3/3/5 (2 worse) |
    | 5 | 0.676 ± 0.062 | 91.72 ± 1.72 | 0.051 ± 0.008 | -2.394 ± 0.198 | 0.994 ± 0.006 | 0.000 ± 0.000 | 3/4/3/5 (2 worse) |
    | 6 | 0.676 ± 0.063 | 91.72 ± 1.74 | 0.050 ± 0.008 | -2.393 ± 0.198 | 0.994 ± 0.006 | 0.000 ± 0.000 | 3/3/3/5 (2 worse) |
    | 7 | 0.676 ± 0.063 | 91.73 ± 1.72 | 0.050 ± 0.008 | -2.392 ± 0.197 | 0.993 ± 0.006 | 0.000 ± 0.000 | 3/4/3/5 (2 worse) |
    | 8 | 0.676 ± 0.063 | 91.73 ± 1.72 | 0.050 ± 0.008 | -2.392 ± 0.197 | 0.993 ± 0.006 | 0.000 ± 0.000 | 3/4/3/5 (2 worse) |

    reverse-200, alpha = 1: mean ± sd over 5 seeds; wins = seeds where K beats greedy (exact / BLEU / CER / log p), worse = seeds where its exact match is lower
    | K | exact match | BLEU | CER | log p | length | search errors | wins |
    |---:|---:|---:|---:|---:|---:|---:|---:|
    | 1 | 0.662 ± 0.054 | 91.22 ± 1.67 | 0.053 ± 0.008 | -2.486 ± 0.236 | 0.997 ± 0.008 | 0.065 ± 0.021 | 0/0/0/0 (0 worse) |
    | 2 | 0.673 ± 0.060 | 91.77 ± 1.60 | 0.049 ± 0.007 | -2.419 ± 0.205 | 1.001 ± 0.005 | 0.024 ± 0.010 | 4/5/4/5 (1 worse) |
    | 3 | 0.670 ± 0.061 | 91.71 ± 1.66 | 0.049 ± 0.008 | -2.411 ± 0.203 | 1.002 ± 0.005 | 0.022 ± 0.011 | 4/5/4/5 (1 worse) |
    | 4 | 0.670 ± 0.062 | 91.65 ± 1.69 | 0.050 ± 0.008 | -2.408 ± 0.201 | 1.002 ± 0.005 | 0.021 ± 0.012 | 4/5/4/5 (1 worse) |
    | 5 | 0.671 ± 0.061 | 91.65 ± 1.66 | 0.050 ± 0.007 | -2.408 ± 0.200 | 1.002 ± 0.005 | 0.021 ± 0.012 | 4/5/5/5 (1 worse) |
    | 6 | 0.670 ± 0.062 | 91.61 ± 1.71 | 0.050 ± 0.008 | -2.408 ± 0.200 | 1.003 ± 0.006 | 0.022 ± 0.012 | 4/5/4/5 (1 worse) |
    | 7 | 0.670 ± 0.062 | 91.62 ± 1.70 | 0.050 ± 0.008 | -2.408 ± 0.200 | 1.003 ± 0.006 | 0.022 ± 0.012 | 4/5/4/5 (1 worse) |
    | 8 | 0.670 ± 0.062 | 91.62 ± 1.70 | 0.050 ± 0.008 | -2.407 ± 0.200 | 1.002 ± 0.005 | 0.022 ± 0.012 | 4/5/4/5 (1 worse) |

    CPU time: 253 s

The machine that first stored the decoding chapter (machine A, another Xeon of the same kind,
same torch; its output, which this docstring held until 2026-11-28, is in
bench/results/study_decoding.native-earlier.txt, 128 s of CPU) printed the same digits for
dates-75 and dates-150 (except that the log p of dates-150 improved in 4 seeds, not 3) and
other models for reverse-200: exact match greedy -> K = 2 -> K = 8 (alpha = 0) 0.690 0.702
0.702, 0.570 0.598 0.590, 0.562 0.502 0.484, 0.676 0.716 0.724, 0.754 0.764 0.764 for seeds
0-4; seed 2 lost 7.8 points with eight beams (10.2 with alpha = 1; K = 8 fixes 14, breaks 53,
34 of them longer than their reference).

Under the perturbed numerics (`make study-perturbed STUDY=bench/study_decoding.py`; output in
bench/results/study_decoding.perturbed.txt; 428 s of CPU on machine B, torch's scalar kernels
being slower): dates-75 and dates-150 again print the same digits as above, every seed.
reverse-200, exact match greedy -> K = 2 -> K = 8 (alpha = 0): 0.664 0.676 0.674, 0.610 0.618
0.610, 0.602 0.626 0.620, 0.706 0.732 0.734, 0.742 0.754 0.756 (mean 0.665 ± 0.060 -> 0.681 ±
0.061 -> 0.679 ± 0.066); K = 2 beats greedy decoding in all five seeds with either alpha,
K = 8 in four with alpha = 0 (seed 1 ties) and in five with alpha = 1; search errors at
K = 8: 0 (alpha = 0), 0.018 ± 0.002 (alpha = 1); total output length 0.984-0.992 of the
references'.

Over the fifteen runs (five seeds, machines A and B natively, B perturbed), on reverse-200
eight beams change exact match by -0.078 to +0.048 with alpha = 0 (11 better, 3 worse, 1
equal) and by -0.102 to +0.042 with alpha = 1 (12 better, 3 worse); on dates-75 every beam
of 2 to 8 beats greedy decoding in exact match, BLEU, CER and log p in all fifteen.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from seqlearn.data import (DATE_SOURCE_CHARS, DATE_TARGET_CHARS, LETTERS, Vocab, date_pairs,
                           seq2seq_batch, string_pairs)
from seqlearn.decoding import beam_search, seq2seq_decoder
from seqlearn.metrics import character_error_rate, corpus_bleu
from seqlearn.seeding import seed_all
from seqlearn.seq2seq import Seq2Seq
from seqlearn.train import fit_seq2seq

HIDDEN, EMBEDDING, BATCH, LR, SCORE = 64, 32, 64, 5e-3, "dot"
TEST_SEED, TEST_SIZE = 10_000, 500
BEAMS, ALPHAS = range(1, 9), (0.0, 1.0)
CASES = {"dates-75": ("dates", 75), "dates-150": ("dates", 150),
         "reverse-200": ("reverse", 200)}
DATES_IN, DATES_OUT, LETTER_VOCAB = Vocab(DATE_SOURCE_CHARS), Vocab(DATE_TARGET_CHARS), \
    Vocab(LETTERS)


def data(task: str, n: int, rng: np.random.Generator) -> tuple[list, Vocab, Vocab]:
    if task == "dates":
        return date_pairs(n, rng), DATES_IN, DATES_OUT
    return string_pairs(n, rng, min_len=5, max_len=20), LETTER_VOCAB, LETTER_VOCAB


def train(task: str, steps: int, seed: int) -> Seq2Seq:
    """The decoding chapter's recipe (that of the attention chapter)."""
    pairs, vin, vout = data(task, steps * BATCH, np.random.default_rng(seed))
    seed_all(seed)
    model = Seq2Seq(vin, vout, HIDDEN, score=SCORE, embedding=EMBEDDING)
    fit_seq2seq(model, lambda k: seq2seq_batch(pairs[k * BATCH:(k + 1) * BATCH], vin, vout),
                steps, lr=LR)
    return model.eval()


def reference_log_probs(model: Seq2Seq, batch) -> torch.Tensor:
    """log p(y | x) of each reference (its <eos> included), by teacher forcing: (N,)."""
    with torch.no_grad():
        logits, _ = model(batch.src, batch.src_lengths, batch.tgt_in)
    lp = torch.log_softmax(logits.double(), -1).gather(-1, batch.tgt_out[..., None])[..., 0]
    return (lp * batch.tgt_mask).sum(1)


def evaluate(model: Seq2Seq, task: str) -> dict[tuple[int, float], dict[str, float]]:
    pairs, vin, vout = data(task, TEST_SIZE, np.random.default_rng(TEST_SEED))
    batch = seq2seq_batch(pairs, vin, vout)
    refs = [t for _, t in pairs]
    ref_lp = reference_log_probs(model, batch)
    max_len = batch.tgt_out.shape[1] + 5
    out = {}
    for alpha in ALPHAS:
        greedy_ok = None
        for K in BEAMS:
            result = beam_search(seq2seq_decoder(model, batch.src, batch.src_lengths), K,
                                 max_len, length_penalty=alpha)
            hyps = [vout.decode(row[:n]) for row, n in zip(result.best, result.lengths[:, 0])]
            ok = np.array([h == r for h, r in zip(hyps, refs)])
            greedy_ok = ok if greedy_ok is None else greedy_ok
            lp = result.log_probs[:, 0]
            out[K, alpha] = {
                "exact": float(ok.mean()), "bleu": corpus_bleu(hyps, refs),
                "cer": character_error_rate(hyps, refs), "log_p": float(lp.mean()),
                "length": sum(map(len, hyps)) / sum(map(len, refs)),
                "search_errors": float(((~torch.from_numpy(ok)) & (ref_lp > lp + 1e-9))
                                       .double().mean()),
                "fixed": int((ok & ~greedy_ok).sum()), "broken": int((~ok & greedy_ok).sum()),
                "broken_longer": sum(bool(g and not k) and len(h) > len(r) for g, k, h, r
                                     in zip(greedy_ok, ok, hyps, refs))}
    return out


def mean_sd(values: list[float], digits: int = 3) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.{digits}f} ± {sd:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"attention seq2seq ({SCORE} score), biGRU 2x{HIDDEN // 2} + GRU {HIDDEN}, batch "
          f"{BATCH}, Adam {LR}, clip 1; test: {TEST_SIZE} examples; seeds {args.seeds}")
    start = time.process_time()
    for case in args.cases:
        task, steps = CASES[case]
        runs = []
        print(f"\n=== {case}: per seed, greedy -> K = 2 -> K = 8 ===")
        for seed in args.seeds:
            runs.append(evaluate(train(task, steps, seed), task))
            for alpha in ALPHAS:
                r1, r2, r8 = (runs[-1][K, alpha] for K in (1, 2, 8))
                print(f"seed {seed} alpha {alpha:g}: exact {r1['exact']:.3f} {r2['exact']:.3f} "
                      f"{r8['exact']:.3f}, CER {r1['cer']:.4f} {r2['cer']:.4f} {r8['cer']:.4f}, "
                      f"log p {r1['log_p']:.3f} {r8['log_p']:.3f}, search errors "
                      f"{r1['search_errors']:.3f} {r8['search_errors']:.3f}; K = 8 fixes "
                      f"{r8['fixed']}, breaks {r8['broken']} ({r8['broken_longer']} longer)",
                      flush=True)
        for alpha in ALPHAS:
            print(f"\n{case}, alpha = {alpha:g}: mean ± sd over {len(runs)} seeds; "
                  "wins = seeds where K beats greedy (exact / BLEU / CER / log p), "
                  "worse = seeds where its exact match is lower")
            print("| K | exact match | BLEU | CER | log p | length | search errors | wins |")
            print("|---:|---:|---:|---:|---:|---:|---:|---:|")
            for K in BEAMS:
                col = {m: [run[K, alpha][m] for run in runs]
                       for m in ("exact", "bleu", "cer", "log_p", "length", "search_errors")}
                wins = [sum(run[K, alpha][m] * sign > run[1, alpha][m] * sign for run in runs)
                        for m, sign in (("exact", 1), ("bleu", 1), ("cer", -1),
                                        ("log_p", 1))]
                worse = sum(run[K, alpha]["exact"] < run[1, alpha]["exact"] for run in runs)
                print(f"| {K} | {mean_sd(col['exact'])} | {mean_sd(col['bleu'], 2)} "
                      f"| {mean_sd(col['cer'])} | {mean_sd(col['log_p'])} "
                      f"| {mean_sd(col['length'])} | {mean_sd(col['search_errors'])} "
                      f"| {'/'.join(map(str, wins))} ({worse} worse) |")
    print(f"\nCPU time: {time.process_time() - start:.0f} s")


if __name__ == "__main__":
    main()
