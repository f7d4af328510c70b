"""seqlearn.data.stories: the answers follow from the story, and from the supporting facts alone."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from seqlearn.data import Story, StoryBatch, encode_stories, stories, story_vocab
from seqlearn.data.stories import OBJECTS, PEOPLE, PLACES

MOVE = re.compile(r"(\w+) (?:went|moved|journeyed|travelled) to the (\w+)")
TAKE = re.compile(r"(\w+) (?:picked up|got|grabbed) the (\w+)")
DROP = re.compile(r"(\w+) (?:dropped|put down|discarded) the (\w+)")


def replay(sentences: list[str]) -> tuple[dict, dict, dict]:
    """An independent interpreter: places of people, carriers and places of objects.

    It also asserts that the world stays consistent (one carrier per object, an object is
    picked up where it lies, only by someone who is somewhere, and dropped by its carrier).
    """
    where: dict = {}
    holder: dict = {}
    lies: dict = {}
    for s in sentences:
        if m := MOVE.fullmatch(s):
            assert where.get(m[1]) != m[2], f"a move must change the place: {s!r}"
            where[m[1]] = m[2]
        elif m := TAKE.fullmatch(s):
            person, obj = m[1], m[2]
            assert person in where and holder.get(obj) is None
            assert lies.get(obj) in (None, where[person]), f"{obj} lies elsewhere: {s!r}"
            holder[obj], lies[obj] = person, None
        elif m := DROP.fullmatch(s):
            person, obj = m[1], m[2]
            assert holder.get(obj) == person, f"only the carrier drops: {s!r}"
            holder[obj], lies[obj] = None, where[person]
        else:
            raise AssertionError(f"unparsed sentence {s!r}")
    return where, holder, lies


def answer_from(story: Story, task: int) -> str:
    """The answer derived by replaying the whole story."""
    where, holder, _ = replay(story.sentences)
    subject = story.question.split()[-2]
    return where[subject] if task == 1 else where[holder[subject]]


@pytest.mark.parametrize("task", [1, 2])
def test_answers_follow_from_the_story_and_from_the_supporting_facts(task):
    for story in stories(600, np.random.default_rng(task), task=task):
        assert answer_from(story, task) == story.answer
        assert len(story.supporting) == task
        assert 6 <= len(story.sentences) <= 20
        facts = [story.sentences[i] for i in story.supporting]
        subject = story.question.split()[-2]
        if task == 1:
            assert story.question == f"where is {subject} ?"
            m = MOVE.fullmatch(facts[0])
            assert m and m[1] == subject and m[2] == story.answer
            later = story.sentences[story.supporting[0] + 1:]
            assert not any((m := MOVE.fullmatch(s)) and m[1] == subject for s in later)
        else:
            assert story.question == f"where is the {subject} ?"
            take, move = TAKE.fullmatch(facts[0]), MOVE.fullmatch(facts[1])
            assert take and take[2] == subject and move and move[1] == take[1]
            assert move[2] == story.answer
            first, second = story.supporting  # no later move of the carrier, no later drop
            assert not any((m := MOVE.fullmatch(s)) and m[1] == take[1]
                           for s in story.sentences[second + 1:])
            assert not any((m := DROP.fullmatch(s)) and m[2] == subject
                           for s in story.sentences[first + 1:])


def test_stories_are_deterministic_and_use_the_requested_world():
    a = stories(20, np.random.default_rng(5), task=2)
    b = stories(20, np.random.default_rng(5), task=2)
    assert a == b and a != stories(20, np.random.default_rng(6), task=2)
    small = stories(200, np.random.default_rng(0), task=1, min_sentences=3, max_sentences=4,
                    people=2, places=3, objects=1)
    words = {w for s in small for line in s.sentences for w in line.split()}
    assert {len(s.sentences) for s in small} == {3, 4}
    assert words & set(PEOPLE) == set(PEOPLE[:2])
    assert words & set(PLACES) <= set(PLACES[:3]) and words & set(OBJECTS) <= {OBJECTS[0]}
    answers = {s.answer for s in stories(300, np.random.default_rng(1), task=2)}
    assert answers == set(PLACES[:6])  # every place is an answer sometime


def test_encode_stories_round_trips_and_pads():
    vocab = story_vocab()
    batch = stories(7, np.random.default_rng(3), task=2)
    enc = encode_stories(batch, vocab, sentences=25, words=8)
    assert isinstance(enc, StoryBatch)
    assert enc.story.shape == (7, 25, 8) and enc.query.shape == (7, 8)
    assert enc.story.dtype == enc.query.dtype == enc.answer.dtype == torch.long
    for b, story in enumerate(batch):
        for i in range(25):
            row = [vocab.itos[t] for t in enc.story[b, i].tolist() if t != vocab.pad]
            assert row == (story.sentences[i].split() if i < len(story.sentences) else [])
        assert [vocab.itos[t] for t in enc.query[b].tolist() if t] == story.question.split()
        assert vocab.itos[int(enc.answer[b])] == story.answer
        assert enc.supporting[b].nonzero().flatten().tolist() == sorted(story.supporting)
    tight = encode_stories(batch, vocab)
    assert tight.story.shape == (7, max(len(s.sentences) for s in batch), 5)


def test_refusals():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="task must be 1"):
        stories(3, rng, task=3)
    with pytest.raises(TypeError, match="task must be an int"):
        stories(3, rng, task=True)
    with pytest.raises(ValueError, match="max_sentences must be at least 9"):
        stories(3, rng, min_sentences=9, max_sentences=8)
    with pytest.raises(ValueError, match="people must be at most 6"):
        stories(3, rng, people=7)
    with pytest.raises(TypeError, match="rng must be a numpy"):
        stories(3, 0)
    with pytest.raises(ValueError, match="non-empty list of Story"):
        encode_stories([], story_vocab())
    with pytest.raises(TypeError, match="every item must be a Story"):
        encode_stories([("a", "b")], story_vocab())
    with pytest.raises(TypeError, match="Vocab"):
        encode_stories(stories(1, rng), "vocab")
    with pytest.raises(ValueError, match="sentences must be at least"):
        encode_stories(stories(1, rng, min_sentences=8), story_vocab(), sentences=3)
    bad = Story(["mary went to the kitchen"], "where is mary ?", "kitchen", [4])
    with pytest.raises(ValueError, match="supporting index must be at most 0"):
        encode_stories([bad], story_vocab())


def test_task_must_be_an_int_not_a_float():
    """``1.0 in (1, 2)`` is True, but every other int argument refuses floats
    (issue 31)."""
    rng = np.random.default_rng(0)
    with pytest.raises(TypeError, match="task must be an int .*got float 1.0"):
        stories(3, rng, task=1.0)
    assert stories(2, np.random.default_rng(0), task=np.int64(1)) == stories(
        2, np.random.default_rng(0), task=1)
