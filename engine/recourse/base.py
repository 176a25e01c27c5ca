"""The interface every recourse method implements and the record every method returns.

A method maps a batch of factual profiles x (n, d) and their actionability profiles to
actions (mask m, values a). ``RecourseContext.evaluate`` turns actions into the full record:
the counterfactual x' = CF(x, do(x_m = a_m)) through the context's world model (the exact SCM
where the scenario has one), the decision h(x'), costs, densities, plausibility, hap,
violations and L0/L1 distances (engine.metrics). Every method calls it, so every method is
measured the same way.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

import torch
from torch import Tensor

from engine import metrics
from engine.preferences import ActionabilityProfiles, CostProfile
from engine.scenarios.base import Scenario
from engine.scm import ArrayLike, as_batch


class Classifier(Protocol):
    """The decision model as recourse methods see it."""

    def predict_proba(self, x: Tensor) -> Tensor: ...

    def decision(self, x: Tensor) -> Tensor: ...


class WorldModel(Protocol):
    """SCM or causal flow: the contract of DESIGN.md."""

    def counterfactual(
        self, x: ArrayLike, action_mask: ArrayLike, action_values: ArrayLike
    ) -> Tensor: ...

    def log_prob(self, x: ArrayLike) -> Tensor: ...


@dataclass
class RecourseBatch:
    """Recourses for a batch (one row per recourse; ``person`` indexes the input batch).

    Tensors are (n,) or (n, d), float64 unless noted. ``found`` is False where the method had
    no action to offer (then the action is empty and x' = x).
    """

    method: str
    person: Tensor  # long
    x: Tensor
    action_mask: Tensor  # bool
    action_values: Tensor
    x_cf: Tensor
    found: Tensor  # bool
    valid: Tensor  # bool
    cost: Tensor
    weighted_cost: Tensor
    log_prob_factual: Tensor
    log_prob_cf: Tensor
    plausible: Tensor  # bool
    hap: Tensor  # NaN where undefined
    violations: Tensor  # long
    l0_actions: Tensor
    l1_actions: Tensor
    l0_profile: Tensor
    l1_profile: Tensor
    runtime: float
    density_source: str
    extras: dict[str, Tensor] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.person.shape[0])

    def select(self, idx: Tensor | list[int]) -> RecourseBatch:
        """The rows ``idx`` (a long index or bool mask) as a new batch."""
        idx_t = torch.as_tensor(idx)
        kwargs: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, Tensor):
                kwargs[f.name] = v[idx_t]
            elif f.name == "extras":
                kwargs[f.name] = {k: t[idx_t] for k, t in v.items()}
            else:
                kwargs[f.name] = v
        return RecourseBatch(**kwargs)

    def record(self, i: int, feature_names: tuple[str, ...]) -> dict[str, Any]:
        """Row i as plain Python values (for storage and JSON)."""
        rec: dict[str, Any] = {
            "method": self.method,
            "person": int(self.person[i]),
            "x": dict(zip(feature_names, self.x[i].tolist(), strict=True)),
            "actions": {
                name: float(self.action_values[i, j])
                for j, name in enumerate(feature_names)
                if bool(self.action_mask[i, j])
            },
            "x_cf": dict(zip(feature_names, self.x_cf[i].tolist(), strict=True)),
            "runtime": self.runtime / max(len(self), 1),
            "density_source": self.density_source,
        }
        for name in (
            "found",
            "valid",
            "cost",
            "weighted_cost",
            "log_prob_factual",
            "log_prob_cf",
            "plausible",
            "hap",
            "violations",
            "l0_actions",
            "l1_actions",
            "l0_profile",
            "l1_profile",
        ):
            v = getattr(self, name)[i].item()
            rec[name] = v if not isinstance(v, float) or v == v else None
        return rec

    def summary(self) -> dict[str, float]:
        """Population metrics: validity, plausibility, cost mean/sd over valid, hap, violations."""
        valid = self.valid
        return {
            "n": len(self),
            "validity": float(valid.double().mean()) if len(self) else float("nan"),
            "plausibility": float(self.plausible.double().mean()) if len(self) else float("nan"),
            "cost_mean": metrics.nanmean(self.cost[valid]),
            "cost_sd": metrics.nanstd(self.cost[valid]),
            "hap": metrics.nanmean(self.hap),
            "violations": int(self.violations.sum()),
            "seconds": self.runtime,
        }


@dataclass
class RecourseContext:
    """What a method needs from the world: scenario, decision model, world model, cost profile.

    ``world`` computes consequences and densities when evaluating an action; it defaults to
    the scenario's exact SCM (``density_source = "scm"``).
    """

    scenario: Scenario
    classifier: Classifier
    world: WorldModel | None = None
    cost_profile: CostProfile = field(default_factory=CostProfile)
    density_source: str = "scm"

    def __post_init__(self) -> None:
        if self.world is None:
            self.world = self.scenario.scm

    @property
    def ranges(self) -> Tensor:
        return self.scenario.ranges

    @property
    def categorical(self) -> Tensor:
        return torch.tensor([f.discrete for f in self.scenario.features])

    def check_inputs(self, factuals: ArrayLike, profiles: ActionabilityProfiles) -> Tensor:
        """Validate a batch of factuals against the scenario and its profiles."""
        x, _ = as_batch(factuals, self.scenario.d, "factuals")
        if len(profiles) != x.shape[0]:
            raise ValueError(f"{x.shape[0]} factuals but {len(profiles)} actionability profiles")
        outside = profiles.hard_mask & ~self.scenario.actionable_mask()
        if outside.any():
            raise ValueError(
                "actionability profiles mark a feature that is not globally actionable"
            )
        return x

    def evaluate(
        self,
        method: str,
        x: Tensor,
        action_mask: Tensor,
        action_values: Tensor,
        profiles: ActionabilityProfiles,
        *,
        runtime: float,
        person: Tensor | None = None,
        found: Tensor | None = None,
        x_cf: Tensor | None = None,
        log_prob_factual: Tensor | None = None,
    ) -> RecourseBatch:
        """Build the full record for actions (see the module docstring).

        ``profiles`` and ``x`` are per row (already expanded to candidates if needed).
        ``x_cf``/``log_prob_factual`` may be passed when the caller already computed them
        with this context's world model.
        """
        n = x.shape[0]
        x = x.to(torch.float64)
        mask = action_mask.bool()
        values = torch.where(mask, action_values.to(torch.float64), x)
        with torch.no_grad():
            if x_cf is None:
                x_cf = self.world.counterfactual(x, mask, values).to(torch.float64)
            lp_x = (
                self.world.log_prob(x).to(torch.float64)
                if log_prob_factual is None
                else log_prob_factual.to(torch.float64)
            )
            lp_cf = self.world.log_prob(x_cf).to(torch.float64)
            valid = self.classifier.decision(x_cf.float()).bool()
        weights = profiles.weights(self.cost_profile)
        dist = metrics.distances(x, x_cf, mask, self.ranges, self.categorical)
        return RecourseBatch(
            method=method,
            person=torch.arange(n) if person is None else person.long(),
            x=x,
            action_mask=mask,
            action_values=values,
            x_cf=x_cf,
            found=torch.ones(n, dtype=torch.bool) if found is None else found.bool(),
            valid=valid,
            cost=metrics.action_cost(x, x_cf, mask, self.ranges),
            weighted_cost=metrics.action_cost(x, x_cf, mask, self.ranges, weights),
            log_prob_factual=lp_x,
            log_prob_cf=lp_cf,
            plausible=metrics.plausible(lp_cf, lp_x),
            hap=metrics.hap(mask, profiles.least_preferred(), profiles.n_actionable),
            violations=metrics.violations(mask, profiles.hard_mask),
            l0_actions=dist.l0_actions,
            l1_actions=dist.l1_actions,
            l0_profile=dist.l0_profile,
            l1_profile=dist.l1_profile,
            runtime=runtime,
            density_source=self.density_source,
        )


class RecourseMethod(ABC):
    """A recourse method: ``recourse(factuals, profiles)`` for a whole batch at once.

    Methods may also expose ``candidates(...)``: every valid plan they considered, as one
    RecourseBatch whose ``person`` column says whose plan each row is (the set a distance
    design selects from).
    """

    name: str = "method"

    def __init__(self, context: RecourseContext) -> None:
        self.context = context

    @abstractmethod
    def recourse(self, factuals: ArrayLike, profiles: ActionabilityProfiles) -> RecourseBatch:
        """One recourse per person."""

    def candidates(self, factuals: ArrayLike, profiles: ActionabilityProfiles) -> RecourseBatch:
        raise NotImplementedError(f"{self.name} does not expose a candidate set")


class Timer:
    """Wall-clock seconds of a block: ``with Timer() as t: ...; t.seconds``."""

    def __enter__(self) -> Timer:
        self._start = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._start
