import pytest
import torch

from seqlearn.seeding import seed_all
from seqlearn.train import SequenceClassifier, accuracy, fit


def test_fit_learns_the_sign_of_the_sum():
    """A tiny torch.nn.RNN learns whether the inputs sum to a positive number."""
    g = seed_all(0)
    model = SequenceClassifier(torch.nn.RNN(1, 8, batch_first=True), 8, 2)

    def batch(step):
        x = torch.randn(64, 5, 1, generator=g)
        return x, (x.sum(dim=(1, 2)) > 0).long()

    losses = fit(model, batch, steps=150, lr=0.02)
    x, y = batch(0)
    assert sum(losses[-10:]) / 10 < 0.5 * sum(losses[:10]) / 10
    assert accuracy(model, x, y) > 0.85
    assert model.training


def test_errors():
    model = SequenceClassifier(torch.nn.RNN(1, 4, batch_first=True), 4, 2)
    with pytest.raises(ValueError, match="steps"):
        fit(model, lambda s: None, steps=0)
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, D\)"):
        model(torch.zeros(3, 4))
    with pytest.raises(TypeError):
        model(torch.zeros(3, 4, 1, dtype=torch.long))
    with pytest.raises(ValueError, match="labels must have shape"):
        accuracy(model, torch.zeros(3, 4, 1), torch.zeros(2, dtype=torch.long))


def test_fit_refuses_a_non_finite_loss():
    model = SequenceClassifier(torch.nn.RNN(1, 4, batch_first=True), 4, 2)
    x = torch.full((3, 4, 1), float("nan"))
    with pytest.raises(ValueError, match=r"model\(x\).* contains NaN or infinity"):
        fit(model, lambda s: (x, torch.zeros(3, dtype=torch.long)), steps=2)
    with pytest.raises(ValueError, match="loss became nan at step 0"):
        fit(model, lambda s: None, steps=2, loss=lambda m, b: torch.tensor(float("nan")))
    with pytest.raises(TypeError, match="steps must be an int"):
        fit(model, lambda s: (x, None), steps=2.5)
