"""Property tests of seqlearn.associative, seqlearn.memory and seqlearn.data.stories."""

import numpy as np
import torch
from hypothesis import given, strategies as st

from properties import F64, covers, not_bools, not_reals, randn, refuses, seeds, sizes
from seqlearn import associative, memory
import importlib

# ``seqlearn.data.stories`` is the function (re-exported); the module is reached by its name
st_stories = importlib.import_module("seqlearn.data.stories")


@covers("seqlearn.associative.soft_lookup", "seqlearn.associative.hard_lookup")
@given(seed=seeds, B=sizes, N=sizes, d=sizes, dv=sizes,
       temperature=st.floats(0.05, 5.0), bad=not_reals)
def test_lookups_equal_softmax_and_argmax_references(seed, B, N, d, dv, temperature, bad):
    x, keys, values = randn(seed, B, d), randn(seed + 1, B, N, d), randn(seed + 2, B, N, dv)
    s, c = associative.soft_lookup(x, keys, values, temperature=temperature)
    scores = torch.einsum("bnd,bd->bn", keys, x)
    ref = torch.softmax(scores / temperature, -1)
    torch.testing.assert_close(c, ref)
    torch.testing.assert_close(s, torch.einsum("bn,bnv->bv", ref, values))
    s_hard, c_hard = associative.hard_lookup(x, keys, values)
    best = scores.argmax(-1)  # ties have probability 0 for Gaussian draws
    torch.testing.assert_close(c_hard, torch.nn.functional.one_hot(best, N).to(F64))
    torch.testing.assert_close(s_hard, values[torch.arange(B), best])
    refuses(associative.soft_lookup, x, keys, values, temperature=bad)
    refuses(associative.soft_lookup, x, keys, values, temperature=-temperature)
    refuses(associative.hard_lookup, x, keys[..., :0, :].transpose(-1, -2), values)
    refuses(associative.hard_lookup, x, keys, values, mask=torch.ones(B, N))


@covers("seqlearn.memory.position_encoding", "seqlearn.memory.MemN2N",
        "seqlearn.memory.answer_loss", "seqlearn.memory.answer_accuracy",
        "seqlearn.memory.supporting_share", "seqlearn.memory.fit_memn2n",
        "seqlearn.data.stories.Story", "seqlearn.data.stories.StoryBatch",
        "seqlearn.data.stories.stories", "seqlearn.data.stories.story_vocab",
        "seqlearn.data.stories.encode_stories")
@given(seed=seeds, n=st.integers(1, 4), task=st.sampled_from([1, 2]), hops=st.integers(1, 3),
       d=st.integers(1, 5), flag=not_bools)
def test_memn2n_on_stories_against_references(seed, n, task, hops, d, flag):
    torch.manual_seed(seed % 1000)
    vocab = st_stories.story_vocab()
    batch = st_stories.stories(n, np.random.default_rng(seed), task=task, min_sentences=2,
                               max_sentences=6)
    assert all(isinstance(s, st_stories.Story) and len(s.supporting) == task for s in batch)
    enc = st_stories.encode_stories(batch, vocab)
    assert isinstance(enc, st_stories.StoryBatch)
    assert enc.supporting.sum(-1).tolist() == [task] * n
    J = int(enc.story.shape[-1])
    loop = torch.tensor([[(1 - j / J) - (k / d) * (1 - 2 * j / J) for k in range(1, d + 1)]
                         for j in range(1, J + 1)], dtype=F64)
    torch.testing.assert_close(memory.position_encoding(J, d, dtype=F64), loop)
    model = memory.MemN2N(len(vocab), d, hops, max_sentences=6, max_words=J).double()
    logits, attention = model(enc.story, enc.query)
    present = (enc.story != 0).any(-1)
    torch.testing.assert_close(attention.sum(-1), torch.ones(n, hops, dtype=F64))
    assert torch.count_nonzero(attention * ~present[:, None]) == 0
    # the answer layer is tied to the last embedding: logits = E_K u for some state u
    u = torch.linalg.lstsq(model.embeddings[hops].weight, logits.T).solution  # (d, n)
    torch.testing.assert_close(model.embeddings[hops].weight @ u, logits.T)
    loss = memory.answer_loss(model, enc)
    torch.testing.assert_close(loss, torch.nn.functional.cross_entropy(logits, enc.answer))
    acc = memory.answer_accuracy(model, enc)
    assert acc == float((logits.argmax(-1) == enc.answer).double().mean())
    share = memory.supporting_share(attention, enc.supporting)
    torch.testing.assert_close(share, (attention * enc.supporting[:, None]).sum(-1).mean(0))
    losses = memory.fit_memn2n(model, lambda step: enc, 2, linear_steps=1)
    assert len(losses) == 2 and all(np.isfinite(losses))
    refuses(model, enc.story, enc.query, linear=flag)
    refuses(model, enc.story.double(), enc.query)
    refuses(memory.MemN2N, len(vocab), d, hops, max_words=0)
    refuses(memory.position_encoding, torch.tensor([-1]), d)
    refuses(memory.supporting_share, attention, enc.supporting.double())
    refuses(memory.fit_memn2n, model, lambda step: enc, 2, linear_steps=3)
    refuses(st_stories.stories, n, np.random.default_rng(seed), task=3)
    refuses(st_stories.encode_stories, batch, vocab, words=1)
