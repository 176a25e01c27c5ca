"""Worlds, decision models, profiles and search tables the Oracle tests build by hand."""

from __future__ import annotations

import math

import torch

from engine.preferences import ActionabilityProfiles
from engine.recourse.oracle.grid import BlockTable, PersonTables
from engine.scenarios.loan import FEATURES
from engine.scm import StructuralCausalModel

L, D, INC, S = 3, 4, 5, 6  # Loan's actionable columns: loan_duration, loan_amount, income, savings


def manual_profiles(loan, hard: list[list[int]], scores: list[list[float]] | None = None):
    """Likert profiles: person i may change the features hard[i], scored 1, 2, ... in that
    order (or ``scores[i]``); the rest 5."""
    n = len(hard)
    mask = torch.zeros(n, loan.d, dtype=torch.bool)
    sc = torch.full((n, loan.d), 5.0, dtype=torch.float64)
    for i, feats in enumerate(hard):
        mask[i, feats] = True
        for r, j in enumerate(feats):
            sc[i, j] = float(r + 1) if scores is None else scores[i][r]
    return ActionabilityProfiles(mask, sc, torch.full((n,), 4.0, dtype=torch.float64), "likert")


class Approves:
    """A decision model that approves exactly the given rows of x' (as tuples of ints), or
    every row (``rows`` None)."""

    def __init__(self, rows=None):
        self.rows = rows

    def decision(self, x):
        if self.rows is None:
            return torch.ones(len(x), dtype=torch.bool)
        return torch.tensor([tuple(int(v) for v in r) in self.rows for r in x.tolist()],
                            dtype=torch.bool)


class IndependentWorld(StructuralCausalModel):
    """Loan's features as independent standard normals (x = u): nothing descends from
    anything, so each actionable feature is a block of its own."""

    feature_names = FEATURES
    parents = {j: () for j in range(len(FEATURES))}
    immutable = (0, 1)

    def sample_noise(self, n, rng):
        return torch.from_numpy(rng.normal(size=(n, self.d)))

    def equation(self, j, x, u_j):
        return u_j

    def inverse_equation(self, j, x):
        return x[:, j]

    def noise_log_prob(self, u):
        return -0.5 * u**2 - 0.5 * math.log(2 * math.pi)

    def log_abs_det_jacobian(self, x):
        return torch.zeros(x.shape[0], dtype=torch.float64)

    def check_support(self, x, name):
        pass

    def label_logit(self, x):
        return torch.zeros(len(x), dtype=torch.float64)


def cost_tables(first: list[list[float]], second: list[list[float]], *,
                 dlogp: tuple[list[list[float]], list[list[float]]] | None = None,
                 offset: list[float] | None = None, tag_people: bool = True) -> PersonTables:
    """Search tables with the given weighted option costs per person (option 0: no action),
    whose plans a decision model can tell apart: plan (i1, i2) of person p has x' = (i1, i2, p)
    (x' = (i1, i2) without ``tag_people``: then both features of x' are actionable). ``dlogp``:
    the two tables' log-density changes (default 0), ``offset`` per person (default 0)."""
    w1 = torch.tensor(first, dtype=torch.float64)
    w2 = torch.tensor(second, dtype=torch.float64)
    p = len(w1)
    d = 3 if tag_people else 2
    dl = [torch.zeros_like(w) for w in (w1, w2)] if dlogp is None else [
        torch.tensor(v, dtype=torch.float64) for v in dlogp]

    def table(w, j):
        m = w.shape[1]
        acted = torch.zeros(m, d, dtype=torch.bool)
        acted[1:, j] = True
        values = torch.zeros(p, m, d, dtype=torch.float64)
        values[:, 1:, j] = 1.0
        x_aff = torch.arange(m, dtype=torch.float64).expand(p, m)[..., None].clone()
        return BlockTable((j,), acted, values, x_aff, w.clone(), w.clone(), dl[j].clone())

    x0 = torch.zeros(p, d, dtype=torch.float64)
    if tag_people:
        x0[:, 2] = torch.arange(p)
    off = torch.zeros(p, dtype=torch.float64) if offset is None else torch.tensor(
        offset, dtype=torch.float64)
    return PersonTables(x0, off, table(w1, 0), table(w2, 1))
