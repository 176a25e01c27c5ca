"""Structural causal models with invertible equations: sample, abduct, intervene, log-density.

An SCM over features x_1..x_d (in topological order) is a set of structural equations

    x_j = f_j(x_pa(j), u_j),   u_j ~ p_j independent,

each invertible in its own noise, u_j = f_j^{-1}(x_j; x_pa(j)). Then

- abduction is exact: u = f^{-1}(x), one equation at a time;
- a counterfactual under the intervention do(x_A = a) keeps u, sets x_A := a and recomputes
  every other feature from its equation in topological order (descendants of A change,
  non-descendants are reproduced exactly);
- the joint density follows from the change of variables
  log p(x) = sum_j log p_j(u_j) + log |d u_j / d x_j|   (the map is triangular).

Subclasses (one per scenario) state the equations; this class holds the machinery shared by
every scenario. Arrays are (n, d) in the scenario's feature order, in model units. Torch
tensors or numpy arrays are accepted; computation runs in float64 and results come back as
float64 tensors (float32 in gives float32 out).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

ArrayLike = Tensor | np.ndarray | Sequence[Sequence[float]]


class WorldModelInputError(ValueError):
    """An array handed to a world model does not have the expected shape or values."""


def as_batch(x: ArrayLike, d: int, name: str = "x") -> tuple[Tensor, torch.dtype]:
    """Validate a batch of profiles and return it as a float64 tensor plus the dtype to return.

    Raises ``WorldModelInputError`` for a wrong shape or non-finite values.
    """
    out_dtype = x.dtype if isinstance(x, Tensor) and x.is_floating_point() else torch.float64
    if not isinstance(x, Tensor):
        x = np.asarray(x)
        if not x.flags.writeable:  # e.g. a broadcast view: torch would alias read-only memory
            x = x.copy()
    t = torch.as_tensor(x)
    if t.ndim == 1:
        t = t.unsqueeze(0)
    if t.ndim != 2 or t.shape[1] != d:
        raise WorldModelInputError(
            f"{name} must have shape (n, {d}) (one column per feature), got {tuple(t.shape)}"
        )
    t = t.to(torch.float64)
    if not torch.isfinite(t).all():
        bad = (~torch.isfinite(t)).nonzero()[0].tolist()
        raise WorldModelInputError(
            f"{name} holds NaN or inf (first at row {bad[0]}, column {bad[1]})"
        )
    return t, out_dtype


def as_action_mask(
    action_mask: ArrayLike,
    n: int,
    feature_names: tuple[str, ...],
    immutable: tuple[int, ...],
) -> Tensor:
    """Validate an (n, d) 0/1 action mask (one row broadcasts) and return it as float64.

    A floating mask keeps its autograd graph (straight-through masks of the amortized methods
    train through it); its values must still be exactly 0 or 1. Acting on an immutable
    feature raises ``WorldModelInputError`` naming the feature.
    """
    d = len(feature_names)
    m, _ = as_batch(action_mask, d, "action_mask")
    if m.shape[0] == 1 and n > 1:
        m = m.expand(n, -1)
    if m.shape[0] != n:
        raise WorldModelInputError(f"action_mask has {m.shape[0]} rows, x has {n}")
    if not ((m == 0) | (m == 1)).all():
        raise WorldModelInputError("action_mask must hold only 0/1 (or booleans)")
    if immutable:
        acted = (m[:, list(immutable)] != 0).any(dim=0)
        if acted.any():
            names = [feature_names[immutable[i]] for i in acted.nonzero().flatten().tolist()]
            raise WorldModelInputError(
                f"action_mask acts on immutable feature(s): {', '.join(names)}"
            )
    return m


class StructuralCausalModel(ABC):
    """Base class of exact, invertible SCMs (see the module docstring for the math).

    Subclasses define ``feature_names``, ``parents`` (index -> parent indices, features listed
    in topological order), ``immutable`` (indices that no action may set), and the four
    per-feature hooks below.

    >>> import torch
    >>> from engine import get_scenario
    >>> scm = get_scenario("loan").scm
    >>> x = scm.sample(4, seed=0)
    >>> torch.allclose(scm.predict(scm.abduct(x)), x, atol=1e-5)    # x = F(U), U = F^-1(x)
    True
    >>> sorted(scm.descendants(5))     # what an income change moves: savings
    [6]
    """

    feature_names: tuple[str, ...]
    parents: dict[int, tuple[int, ...]]
    immutable: tuple[int, ...]
    # ``equation`` reads its ``x`` only as columns ``x[:, k]`` of parents k (then
    # ``shift_pass`` hands it the computed columns instead of a growing (n, d) tensor)
    columnwise: bool = False

    @property
    def d(self) -> int:
        return len(self.feature_names)

    # ---- per-scenario hooks -------------------------------------------------------------
    @abstractmethod
    def sample_noise(self, n: int, rng: np.random.Generator) -> Tensor:
        """Draw n exogenous noise vectors u, shape (n, d), float64."""

    @abstractmethod
    def equation(self, j: int, x: Tensor, u_j: Tensor) -> Tensor:
        """x_j = f_j(x_pa(j), u_j); ``x`` holds already-computed parents in its columns."""

    @abstractmethod
    def inverse_equation(self, j: int, x: Tensor) -> Tensor:
        """u_j = f_j^{-1}(x_j; x_pa(j))."""

    @abstractmethod
    def noise_log_prob(self, u: Tensor) -> Tensor:
        """Per-feature exogenous log-densities log p_j(u_j), shape (n, d)."""

    @abstractmethod
    def log_abs_det_jacobian(self, x: Tensor) -> Tensor:
        """sum_j log |d u_j / d x_j| of the abduction map, shape (n,)."""

    @abstractmethod
    def check_support(self, x: Tensor, name: str) -> None:
        """Raise ``WorldModelInputError`` if a row lies outside the model's support."""

    @abstractmethod
    def label_logit(self, x: ArrayLike) -> Tensor:
        """The true label logit l(x), P(Y = 1 | x) = sigmoid(l(x)), shape (n,)."""

    def label_proba(self, x: ArrayLike) -> Tensor:
        """The true P(Y = 1 | x) = sigmoid(l(x)), shape (n,)."""
        return torch.sigmoid(self.label_logit(x))

    # ---- shared machinery ---------------------------------------------------------------
    def sample(self, n: int, seed: int = 0) -> Tensor:
        """Draw n profiles from the observational distribution (float64, (n, d))."""
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        return self.predict(self.sample_noise(n, np.random.default_rng(int(seed))))

    def predict(self, u: Tensor) -> Tensor:
        """Push noise through the equations: x = f(u)."""
        x = torch.zeros_like(u, dtype=torch.float64)
        for j in range(self.d):
            x[:, j] = self.equation(j, x, u[:, j])
        return x

    def abduct(self, x: ArrayLike) -> Tensor:
        """Exact abduction u = f^{-1}(x)."""
        t, dtype = as_batch(x, self.d)
        self.check_support(t, "x")
        u = torch.stack([self.inverse_equation(j, t) for j in range(self.d)], dim=1)
        return u.to(dtype)

    def counterfactual(
        self, x: ArrayLike, action_mask: ArrayLike, action_values: ArrayLike
    ) -> Tensor:
        """x_cf under do(x_A = a): abduct, set acted-on features, recompute the rest in order.

        ``action_mask`` (n, d) of 0/1 (or bool) says which features are set; ``action_values``
        (n, d) holds their new values (other entries are ignored). Immutable features may not
        be acted on.
        """
        t, dtype = as_batch(x, self.d)
        self.check_support(t, "x")
        mask = self._as_mask(action_mask, t.shape[0])
        values = self._as_values(action_values, t.shape[0])
        u = torch.stack([self.inverse_equation(j, t) for j in range(self.d)], dim=1)
        x_cf = torch.zeros_like(t)
        cols = torch.arange(self.d)
        for j in range(self.d):
            # out of place, so x_cf stays differentiable in the action values
            x_j = torch.where(mask[:, j], values[:, j], self.equation(j, x_cf, u[:, j]))
            x_cf = torch.where(cols == j, x_j[:, None], x_cf)
        self.check_support(x_cf, "action_values")
        return x_cf.to(dtype)

    def shift_counterfactual(
        self, x: ArrayLike, shift_mask: ArrayLike, shifts: ArrayLike, lower: Tensor,
        upper: Tensor, *, noise: Tensor | None = None,
    ) -> Tensor:
        """x' under shift interventions, in one pass: abduct u, then in causal order

            x'_j = clamp(f_j(x'_pa(j), u_j) + s_j, lower_j, upper_j)   where shift_mask_j,
            x'_j = f_j(x'_pa(j), u_j)                                  elsewhere.

        Equals hard interventions do(x_j = x'_j) on the shifted features (what
        engine.recourse.shift_actions computes for any world model), differentiable in s.
        ``lower``/``upper``: (d,) or per person (n, d). ``noise``: ``abduct(x)`` computed already (searches that move the same people many
        times abduct them once; the result is the same).
        """
        t, dtype = as_batch(x, self.d)
        u = self.abduct(t) if noise is None else noise
        mask = self._as_mask(shift_mask, t.shape[0])
        s = self._as_values(shifts, t.shape[0])
        shifted = [j for j in range(self.d) if bool(mask[:, j].any())]
        return self.shift_pass(u, mask, s, lower, upper, shifted).to(dtype)

    def shift_pass(self, u: Tensor, mask: Tensor, s: Tensor, lower: Tensor, upper: Tensor,
                   shifted: list[int], fixed: dict[int, Tensor] | None = None) -> Tensor:
        """The pass of ``shift_counterfactual`` on checked inputs (float64 noise ``u`` and
        shifts ``s`` (n, d), bool ``mask``; ``shifted``: the columns some row shifts): for
        searches that move the same people many times and check them once. ``fixed``
        (columnwise SCMs): ``fixed_equations(u, shifted)``, the equations whose value no
        shift changes, computed once."""
        if self.columnwise:
            # The same values as the (n, d) tensor below, without its autograd graph: a column
            # that no shift moves (the immutable ones) carries no gradient, and the backward
            # pass runs through the parents' columns only.
            columns: list[Tensor] = []
            for j in range(self.d):
                if fixed is not None and j in fixed:
                    x_j = fixed[j]
                else:
                    x_j = self.equation(j, _Columns(columns, u.shape[0]),  # type: ignore[arg-type]
                                        u[:, j])
                if j in shifted:
                    x_j = torch.where(mask[:, j], torch.clamp(x_j + s[:, j], lower[..., j], upper[..., j]),
                                      x_j)
                columns.append(x_j)
            return torch.stack(columns, dim=1)
        x_cf = torch.zeros(u.shape, dtype=torch.float64)
        cols = torch.arange(self.d)
        for j in range(self.d):
            x_j = self.equation(j, x_cf, u[:, j])
            if j in shifted:
                x_j = torch.where(mask[:, j], torch.clamp(x_j + s[:, j], lower[..., j], upper[..., j]), x_j)
            x_cf = torch.where(cols == j, x_j[:, None], x_cf)
        return x_cf

    def fixed_equations(self, u: Tensor, shifted: list[int]) -> dict[int, Tensor]:
        """f_j(x'_pa(j), u_j) of the columns j none of whose parents any shift moves (the
        value before j's own shift): the same in every ``shift_pass`` of these people
        (columnwise SCMs; an empty dict otherwise)."""
        if not self.columnwise:
            return {}
        fixed: dict[int, Tensor] = {}
        columns: list[Tensor] = []
        moved: set[int] = set(shifted)
        with torch.no_grad():
            for j in range(self.d):
                x_j = self.equation(j, _Columns(columns, u.shape[0]),  # type: ignore[arg-type]
                                    u[:, j])
                if moved.isdisjoint(self.parents.get(j, ())):
                    fixed[j] = x_j
                else:
                    moved.add(j)
                columns.append(x_j)
        return fixed

    def log_prob(self, x: ArrayLike) -> Tensor:
        """Exact log p(x) = sum_j log p_j(u_j) + log |det d u / d x| (change of variables)."""
        t, dtype = as_batch(x, self.d)
        self.check_support(t, "x")
        u = torch.stack([self.inverse_equation(j, t) for j in range(self.d)], dim=1)
        return (self.noise_log_prob(u).sum(dim=1) + self.log_abs_det_jacobian(t)).to(dtype)

    def descendants(self, j: int) -> set[int]:
        """Indices of every feature causally downstream of feature j."""
        out: set[int] = set()
        for k in range(j + 1, self.d):
            if any(p == j or p in out for p in self.parents.get(k, ())):
                out.add(k)
        return out

    def adjacency(self) -> Tensor:
        """Boolean (d, d) matrix A with A[i, j] = True iff x_j is a parent of x_i (or i == j)."""
        a = torch.eye(self.d, dtype=torch.bool)
        for i, pa in self.parents.items():
            for j in pa:
                a[i, j] = True
        return a

    def _as_mask(self, action_mask: ArrayLike, n: int) -> Tensor:
        return as_action_mask(action_mask, n, self.feature_names, self.immutable).bool()

    def _as_values(self, action_values: ArrayLike, n: int) -> Tensor:
        v, _ = as_batch(action_values, self.d, "action_values")
        if v.shape[0] == 1 and n > 1:
            v = v.expand(n, -1)
        if v.shape[0] != n:
            raise WorldModelInputError(f"action_values has {v.shape[0]} rows, x has {n}")
        return v


class _Columns:
    """The computed columns of a counterfactual as ``equation`` reads them: ``x[:, k]``
    (zeros for a column not computed yet, as in the (n, d) tensor it stands for)."""

    def __init__(self, columns: list[Tensor], n: int) -> None:
        self.columns, self.n = columns, n

    def __getitem__(self, key: tuple[slice, int]) -> Tensor:
        k = key[1]
        if k < len(self.columns):
            return self.columns[k]
        return torch.zeros(self.n, dtype=torch.float64)
