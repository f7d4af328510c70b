"""Synthetic data sets generated in code (no downloads)."""

from seqlearn.data.brackets import (  # noqa: F401
    VOCAB as BRACKET_VOCAB, balanced_string, bracket_dataset, bracket_strings, encode_brackets,
    hard_negative, is_balanced, nesting_depth, running_count)
from seqlearn.data.hold import sample_and_hold  # noqa: F401
from seqlearn.data.recall import recall_batches, recall_dataset, recall_tokens, recall_vocab_size  # noqa: F401
from seqlearn.data.multi_recall import multi_recall_dataset, multi_recall_vocab_size  # noqa: F401
from seqlearn.data.dates import (  # noqa: F401
    DATE_FORMATS, DATE_SOURCE_CHARS, DATE_TARGET_CHARS, date_pairs)
from seqlearn.data.strings import LETTERS, string_pairs  # noqa: F401
from seqlearn.data.vocab import (  # noqa: F401
    PaddedBatch, Seq2SeqBatch, Vocab, pad_batch, seq2seq_batch, vocab_size)
from seqlearn.data.stories import Story, StoryBatch, encode_stories, stories, story_vocab  # noqa: F401
