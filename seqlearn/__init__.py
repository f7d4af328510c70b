"""seqlearn: the companion library of the executable textbook on sequence learning.

Every model of the book is implemented once, readably, in a module named after it. The
modules are listed in the book's order: each imports only modules of its own group or
of the groups above it, and none imports a training loop
(``tests/package/test_structure.py`` checks both).

==============================  ====================================================
module                          what it holds
==============================  ====================================================
*foundation*
``seqlearn.validate``           input checks with errors naming expected and actual
``seqlearn.seeding``            the one seeding helper
``seqlearn.data``               synthetic data sets (no downloads)
``seqlearn.char_text``          real text: Python's language reference, by character
``seqlearn.masks``              causal and padding masks (True = may attend)
``seqlearn.losses``             masked cross-entropy and exact match of the
                                encoder-decoders (seq2seq, Transformer)
``seqlearn.metrics``            BLEU, edit distance and character error rate
*Part I: Recurrence*
``seqlearn.conv``               1-D convolution, pooling, up-sampling from scratch
``seqlearn.scan``               linear recurrences, sequential and parallel scan
``seqlearn.recurrent``          NARX, Jordan and Elman networks
``seqlearn.bptt``               backpropagation through time by hand (NumPy)
*Part II: Gating*
``seqlearn.multiplicative``     multiplicative modules and hypernetworks
``seqlearn.gated``              GRU and LSTM modules
``seqlearn.unroll``             the GRU update unrolled into attention weights
*Part III: Attention*
``seqlearn.scores``             attention score functions (dot, general, additive, ...)
``seqlearn.online_softmax``     the online softmax: exact attention in O(n) memory
``seqlearn.attention``          scaled dot-product and multi-head attention
``seqlearn.positional``         the sinusoidal positional encoding
``seqlearn.seq2seq``            the GRU encoder-decoder, with or without attention
``seqlearn.conv_encoder``       a convolutional encoder for the seq2seq model
``seqlearn.decoding``           beam search for the seq2seq and Transformer models
``seqlearn.causal``             from GRU to causal attention, step by step
``seqlearn.linear_attention``   causal linear attention with a decay (the minGRU's form)
``seqlearn.mingru``             minGRU and minLSTM, computed by a scan in log space
*Part IV: Transformers*
``seqlearn.layernorm``          layer normalisation, equal to torch.nn.LayerNorm
``seqlearn.transformer``        the Transformer encoder-decoder model;
                                its layers are in ``seqlearn.transformer_layers``
``seqlearn.local_attention``    restricted (windowed) self-attention
``seqlearn.complexity``         measured cost, sequential steps and path lengths
``seqlearn.table1``             the layer types of Vaswani et al.'s Table 1
``seqlearn.long_range``         first-token recall and the gradient reaching each input
``seqlearn.saturation``         a softmax's saturation: top weight, entropy, Jacobian
``seqlearn.ngram``              the n-gram language model (counts, add-k smoothing)
``seqlearn.sampling``           sampling with temperature and top-k
``seqlearn.language_model``     character language models and bits per character
*Part V: Memory*
``seqlearn.associative``        key-value memory read: soft lookup and its hard limit
``seqlearn.memory``             end-to-end memory network (MemN2N) for story questions
``seqlearn.ntm``                Neural Turing Machine: addressing, read, write
``seqlearn.copy_task``          the copy task and an LSTM baseline for it
*training*
``seqlearn.train``              the training loops: ``fit`` for any model,
                                ``fit_seq2seq``, ``fit_memn2n``
``seqlearn.warmup``             learning-rate warm-up schedules and a loop using them
*presentation*
``seqlearn.plots``              plotting helpers (imported only by the book)
``seqlearn.widgets``            sliders that work live and in static HTML
``seqlearn.diagrams``           architecture figures of Parts III-V, shown with alt text
==============================  ====================================================

Sub-modules are imported explicitly (``from seqlearn.scan import linear_scan``) so that
importing a model never imports plotting or widget libraries.
"""

__version__ = "0.1.0"
