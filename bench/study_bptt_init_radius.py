"""Spectral radius of the recurrent matrix that ``ElmanRNN`` starts from (torch's U(±1/√H)).

The BPTT chapter trains ``ElmanRNN(3, 16)`` and says its initialisation contracts. This prints the
spectral radius of ``weight_hh`` over 200 seeds (``torch.Generator().manual_seed(s)``,
s = 0..199), and the value 1/√3 ≈ 0.577 that the radius approaches for large H.

    .venv/bin/python bench/study_bptt_init_radius.py

Result (torch 2.13 CPU): min 0.49, mean 0.62, max 0.91; below 1 in all 200 seeds. The native
re-run (bench/results/study_bptt_init_radius.native.txt) prints the same.

Under the perturbed numerics (`make study-perturbed STUDY=bench/study_bptt_init_radius.py`;
output in bench/results/study_bptt_init_radius.perturbed.txt; 2 s of CPU): the same line (no
training, and the eigenvalues are computed in float64).
"""

import numpy as np
import torch

from seqlearn.recurrent import ElmanRNN


def radius(seed: int, hidden: int = 16) -> float:
    net = ElmanRNN(3, hidden, generator=torch.Generator().manual_seed(seed))
    W = net.cells[0].weight_hh.detach().double().numpy()  # (H, H)
    return float(max(abs(np.linalg.eigvals(W))))


if __name__ == "__main__":
    rhos = np.array([radius(s) for s in range(200)])
    print(f"ElmanRNN(3, 16), 200 seeds: spectral radius min {rhos.min():.2f}, "
          f"mean {rhos.mean():.2f}, max {rhos.max():.2f}; below 1 in "
          f"{int((rhos < 1).sum())} of 200; 1/sqrt(3) = {1 / np.sqrt(3):.3f}")
