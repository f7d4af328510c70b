"""seqlearn: the companion library of the executable textbook on sequence learning.

Every model of the book is implemented once, readably, in a module named after it:

============================  =================================================
module                        what it holds
============================  =================================================
``seqlearn.conv``             1-D convolution, pooling, up-sampling from scratch
``seqlearn.recurrent``        NARX, Jordan and Elman networks
``seqlearn.bptt``             backpropagation through time by hand (NumPy)
``seqlearn.multiplicative``   multiplicative modules and hypernetworks
``seqlearn.gated``            GRU and LSTM modules
``seqlearn.unroll``           the GRU update unrolled into attention weights
``seqlearn.scan``             linear recurrences, sequential and parallel scan
``seqlearn.scores``           attention score functions (dot, general, additive, ...)
``seqlearn.attention``        scaled dot-product and multi-head attention, masks
``seqlearn.online_softmax``   the online softmax: exact attention in O(n) memory
``seqlearn.local_attention``  restricted (windowed) self-attention
``seqlearn.complexity``       measured cost, sequential steps and path lengths
``seqlearn.table1``           the layer types of Vaswani et al.'s Table 1
``seqlearn.long_range``       first-token recall and the gradient reaching each input
``seqlearn.saturation``       how saturated a softmax is: top weight, entropy, Jacobian
``seqlearn.transformer``      the Transformer: positional encoding, encoder-decoder model;
                              its layers are in ``seqlearn.transformer_layers``
``seqlearn.layernorm``        layer normalisation, equal to torch.nn.LayerNorm
``seqlearn.warmup``           learning-rate warm-up schedules and a loop that uses them
``seqlearn.causal``           from GRU to causal attention, step by step
``seqlearn.associative``      key-value memory read: soft lookup and its hard limit
``seqlearn.memory``           end-to-end memory network (MemN2N) for story questions
``seqlearn.data``             synthetic data sets (no downloads)
``seqlearn.train``            a small training loop for sequence classifiers
``seqlearn.validate``         input checks with errors naming expected and actual
``seqlearn.seeding``          the one seeding helper
``seqlearn.plots``            plotting helpers (imported only by the book)
``seqlearn.widgets``          sliders that work live and in static HTML
``seqlearn.diagrams``         architecture figures of Parts III-V, shown with alt text
============================  =================================================

Sub-modules are imported explicitly (``from seqlearn.scan import linear_scan``) so that
importing a model never imports plotting or widget libraries.
"""

__version__ = "0.1.0"
