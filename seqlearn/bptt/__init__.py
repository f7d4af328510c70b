"""Backpropagation through time by hand: NumPy float64, no autograd (chapter :doc:`bptt`)."""

from seqlearn.bptt.params import init_params, orthogonal_matrix, param_names  # noqa: F401
from seqlearn.bptt.rnn import (  # noqa: F401
    birnn_backward, birnn_forward, deep_rnn_backward, deep_rnn_forward, hidden_jacobians,
    rnn_backward, rnn_forward, rnn_layer_backward, rnn_layer_forward, rnn_step)
from seqlearn.bptt.truncated import (  # noqa: F401
    pre_activation_gradients, recurrent_gradient_terms, truncated_rnn_backward)
from seqlearn.bptt.counter import counter_params  # noqa: F401
from seqlearn.bptt.reference import to_torch, torch_reference  # noqa: F401
from seqlearn.bptt.clip import clip_grad_norm, global_norm  # noqa: F401
from seqlearn.bptt.lstm import lstm_backward, lstm_forward  # noqa: F401
