"""The interface every recourse method implements, what it declares about itself, and the
context that measures every method the same way.

A method maps a batch of factual profiles x (n, d) and their actionability profiles to
actions (mask m, values a). ``RecourseContext.evaluate`` turns actions into the full record:
the counterfactual x' = CF(x, do(x_m = a_m)) through the context's world model (the exact SCM
where the scenario has one), the decision h(x'), costs, densities, plausibility, hap,
violations, L0/L1 distances and the preference terms (engine.metrics), as one
``RecourseBatch``. Every method calls it, so every method is measured the same way.

A method declares ``Capabilities`` (what it is: amortized, interactive, needs the exact
world, produces candidates, wraps a base method, loads trained artifacts). Studies,
planners and benchmarks ask the capabilities, never the method's name.
"""

from __future__ import annotations

import inspect
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np
import torch
from torch import Tensor

from engine import metrics
from engine.decision import Classifier
from engine.flow_scm import world_model
from engine.preferences import ActionabilityProfiles, CostProfile, all_actionable
from engine.recourse.batch import RecourseBatch
from engine.recourse.plan_rules import PlanRules
from engine.scenarios.base import Scenario
from engine.scenarios.pool_model import PoolWorldModel
from engine.scenarios.tabular_model import TabularWorldModel
from engine.scm import ArrayLike, as_batch


class WorldModel(Protocol):
    """SCM or causal flow: the world-model contract (docs/architecture.md)."""

    def counterfactual(
        self, x: ArrayLike, action_mask: ArrayLike, action_values: ArrayLike
    ) -> Tensor: ...

    def log_prob(self, x: ArrayLike) -> Tensor: ...


@dataclass(frozen=True)
class Capabilities:
    """What a recourse method is; callers ask these instead of comparing method names.

    - ``candidates``: ``candidates()`` returns every valid plan it considered (the set a
      distance design selects from);
    - ``amortized``: trained networks, one forward pass per batch (benchmarks warm it up
      once, then time it on the population and on 5,000 people);
    - ``exact_world``: needs the scenario's exact SCM as world model and finds the exact
      optimum (the speed reference of the amortized methods);
    - ``reference_search``: ``reference_search()`` runs the straightforward per-person
      search the method batches (timed against it, and checked for the same optimum:
      ``objective(batch, profiles)`` is the cost the method minimizes);
    - ``interactive``: asks the person; one person is driven by ``start_session`` /
      ``resume_session``, a batch by ``answered_by(people).recourse(...)``;
    - ``wraps_base``: built over a base method (``base=``); its plans are compared with the
      base's;
    - ``artifacts``: the trained artifacts it loads (built before a study starts).

    >>> from engine import capabilities
    >>> oracle, icarma = capabilities("oracle"), capabilities("icarma")
    >>> oracle.candidates, oracle.amortized, icarma.amortized, icarma.artifacts
    (True, False, True, ('decision', 'flow', 'icarma', 'icarma-likert'))
    """

    candidates: bool = False
    amortized: bool = False
    exact_world: bool = False
    reference_search: bool = False
    interactive: bool = False
    wraps_base: bool = False
    artifacts: tuple[str, ...] = ()


@dataclass
class RecourseContext:
    """What a method needs from the world: scenario, decision model, world model, cost profile.

    ``world`` computes consequences and densities when evaluating an action; it defaults to
    the scenario's world model (engine.flow_scm.world_model: the exact SCM, or a data
    scenario's learned flow read as an SCM, ``density_source = "flow"``), or for a pool +
    rule world its pool model (engine.scenarios.pool_model: no consequences,
    item-frequency densities; ``density_source = "pool"``), or for a tabular world its
    model without a causal graph (engine.scenarios.tabular_model: plans change only what they
    set; independent-marginal densities, ``density_source = "marginals"``). ``rules``: a
    study's plan rules (engine.recourse.plan_rules), which every method then obeys; None
    (benchmarks and paper reproductions): the methods as published.

    >>> from engine import BayesDecision, CostProfile, RecourseContext, get_method, get_scenario
    >>> loan = get_scenario("loan")
    >>> ctx = RecourseContext(loan, BayesDecision(loan), cost_profile=CostProfile("linear"))
    >>> ctx.ranges.shape, ctx.density_source
    (torch.Size([7]), 'scm')
    >>> type(get_method("oracle", ctx)).__name__
    'CausalOracle'
    """

    scenario: Scenario
    classifier: Classifier
    world: WorldModel | None = None
    cost_profile: CostProfile = field(default_factory=CostProfile)
    density_source: str = "scm"
    rules: PlanRules | None = None

    def __post_init__(self) -> None:
        if self.world is None and self.scenario.scm is not None:
            self.world = self.scenario.scm
        elif self.world is None and self.scenario.pool is not None:
            self.world = PoolWorldModel(self.scenario)
            self.density_source = "pool"
        elif self.world is None and self.scenario.world_kind == "tabular":
            self.world = TabularWorldModel(self.scenario)
            self.density_source = "marginals"
        elif self.world is None:
            self.world = world_model(self.scenario)
            self.density_source = "flow"

    @property
    def ranges(self) -> Tensor:
        return self.scenario.ranges

    @property
    def categorical(self) -> Tensor:
        return self.scenario.categorical

    def everybody(self, n: int) -> ActionabilityProfiles:
        """n people able to act on every globally actionable feature (no stated constraints)."""
        return all_actionable(self.scenario.feature_names, self.scenario.actionable, n)

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
        x: ArrayLike,
        action_mask: ArrayLike,
        action_values: ArrayLike,
        profiles: ActionabilityProfiles | None,
        *,
        runtime: float = 0.0,
        person: ArrayLike | None = None,
        found: ArrayLike | None = None,
        x_cf: ArrayLike | None = None,
        log_prob_factual: Tensor | None = None,
    ) -> RecourseBatch:
        """Build the full record for actions (see the module docstring).

        ``profiles`` and ``x`` are per row (already expanded to candidates if needed);
        ``profiles`` None means no stated constraints: costs, hap and violations are measured
        for everybody able to act on every globally actionable feature, and satisfaction and
        violation are NaN. ``x_cf``/``log_prob_factual`` may be passed when the caller
        already computed them with this context's world model. Arrays may be numpy.
        """
        x = _rows(x, torch.float64)
        n = x.shape[0]
        mask = _rows(action_mask, torch.bool)
        values = torch.where(mask, _rows(action_values, torch.float64), x)
        stated = profiles
        profiles = stated if stated is not None else self.everybody(n)
        x_cf, lp_x, lp_cf, valid = self._consequences(x, mask, values, x_cf, log_prob_factual)
        weights = profiles.weights(self.cost_profile)
        dist = metrics.distances(x, x_cf, mask, self.ranges, self.categorical)
        return RecourseBatch(
            method=method,
            person=torch.arange(n) if person is None else torch.as_tensor(person).long(),
            x=x,
            action_mask=mask,
            action_values=values,
            x_cf=x_cf,
            found=(torch.ones(n, dtype=torch.bool) if found is None
                   else torch.as_tensor(found).bool()),
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
            satisfaction=metrics.preference_satisfaction(mask, stated),
            violation=metrics.preference_violation(
                mask, None if stated is None else stated.hard_mask),
            changed=dist.changed,
            runtime=runtime,
            density_source=self.density_source,
        )

    def _consequences(
        self, x: Tensor, mask: Tensor, values: Tensor, x_cf: ArrayLike | None,
        log_prob_factual: Tensor | None,
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """(x', log p(x), log p(x'), h(x') favourable) through the world model (x' and
        log p(x) computed unless given) and the decision model."""
        with torch.no_grad():
            if x_cf is None:
                x_cf = self.world.counterfactual(x, mask, values).to(torch.float64)
            else:
                x_cf = _rows(x_cf, torch.float64)
            lp_x = (
                self.world.log_prob(x).to(torch.float64)
                if log_prob_factual is None
                else log_prob_factual.to(torch.float64)
            )
            lp_cf = self.world.log_prob(x_cf).to(torch.float64)
            valid = self.classifier.decision(x_cf.float()).bool()
        return x_cf, lp_x, lp_cf, valid


def _rows(a: ArrayLike, dtype: torch.dtype) -> Tensor:
    """A (n, d) tensor of ``dtype`` from a tensor or array (a single row becomes (1, d))."""
    t = a if isinstance(a, Tensor) else torch.as_tensor(np.asarray(a))
    return torch.atleast_2d(t).to(dtype)


class RecourseMethod(ABC):
    """A recourse method: ``recourse(factuals, profiles)`` for a whole batch at once.

    ``capabilities`` says what else it offers (``Capabilities``): a candidate set
    (``candidates``), a per-person reference search, interactive sessions.

    >>> from engine import BayesDecision, RecourseContext, get_method, get_scenario
    >>> from engine import all_actionable, rejected_rows
    >>> loan = get_scenario("loan")
    >>> ctx = RecourseContext(loan, BayesDecision(loan))
    >>> test_x, _ = loan.dataset["test"]        # the test split: (x, y)
    >>> x = test_x[rejected_rows(loan, ctx.classifier)[:3]]
    >>> oracle = get_method("oracle", ctx)
    >>> batch = oracle.recourse(x, all_actionable(loan.feature_names, loan.actionable, 3))
    >>> batch.method, batch.valid.tolist(), oracle.capabilities.candidates
    ('oracle', [True, False, True], True)
    """

    name: str = "method"
    capabilities: ClassVar[Capabilities] = Capabilities()

    def __init__(self, context: RecourseContext) -> None:
        self.context = context

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        """The options the constructor takes (``get_method(name, context, **options)``)."""
        params = inspect.signature(cls.__init__).parameters
        return tuple(n for n, p in params.items() if n not in ("self", "context")
                     and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL))

    @classmethod
    def option_problems(cls, options: dict[str, Any]) -> list[str]:
        """What is wrong with these option values, found without building the method (a
        protocol's validation); [] when nothing can be told before building it (the
        default: the constructor checks its options)."""
        return []

    @abstractmethod
    def recourse(self, factuals: ArrayLike, profiles: ActionabilityProfiles) -> RecourseBatch:
        """One recourse per person."""

    def candidates(self, factuals: ArrayLike, profiles: ActionabilityProfiles) -> RecourseBatch:
        """Every valid plan considered, ``person`` saying whose (capability ``candidates``)."""
        raise NotImplementedError(f"{self.name} does not expose a candidate set")

    def plans(
        self, factuals: ArrayLike, profiles: ActionabilityProfiles, *, candidates: bool
    ) -> RecourseBatch:
        """The candidate set, or the one recourse per person where it found an action."""
        if candidates:
            return self.candidates(factuals, profiles)
        batch = self.recourse(factuals, profiles)
        return batch.select(batch.found.nonzero().flatten())


class Timer:
    """Wall-clock seconds of a block: ``with Timer() as t: ...; t.seconds``."""

    def __enter__(self) -> Timer:
        self._start = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._start
