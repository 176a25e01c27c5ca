"""Small network builders shared by the decision model and the amortized recourse networks."""

from __future__ import annotations

from torch import nn


def mlp(n_in: int, hidden: tuple[int, ...], n_out: int) -> nn.Sequential:
    """A ReLU perceptron n_in -> hidden... -> n_out with a linear last layer."""
    layers: list[nn.Module] = []
    width = n_in
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    layers.append(nn.Linear(width, n_out))
    return nn.Sequential(*layers)
