"""A protocol's ``simulation`` block: the hidden behaviour of its synthetic participants.

The block overrides the reference behaviour of engine.synthetic (rating model, true
constraints, reporting noise, HARE answers, attention); ``behaviour`` turns it into the
engine's ``Behaviour``. Every check of the block is a validator of its models, so a block
built in Python is checked like one read from YAML.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from engine.metric_names import DISTANCES
from engine.synthetic.participants import Behaviour
from engine.synthetic.rating_model import RatingBehaviour
from protocols.registries import distribution_problem

DistanceName = Literal[DISTANCES]  # type: ignore[valid-type]


class _Block(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HareSpec(_Block):
    """Synthetic HARE answers: Luce choice with ``temperature`` on the true personal cost;
    accept when the cost is within the person's threshold (lognormal around ``threshold``)."""

    temperature: float = Field(default=0.05, gt=0)
    threshold: float = Field(default=0.15, gt=0)
    threshold_sd: float = Field(default=0.5, ge=0)


class OutcomeOverrides(_Block):
    """Overrides of one rating model's parameters (None keeps the reference value)."""

    intercept: float | None = None
    drop: float | None = None
    scale: float | None = Field(default=None, gt=0)
    satisfaction: float | None = None
    violation: float | None = None
    sd_intercept: float | None = Field(default=None, ge=0)
    sd_slope: float | None = Field(default=None, ge=0)
    cutpoints: list[float] | None = Field(default=None, min_length=6, max_length=6)

    @field_validator("cutpoints")
    @classmethod
    def _increasing(cls, cuts: list[float] | None) -> list[float] | None:
        if cuts is not None and any(b <= a for a, b in zip(cuts, cuts[1:], strict=False)):
            raise ValueError("must be strictly increasing")
        return cuts


class RatingOverrides(_Block):
    distance: DistanceName | None = None
    acceptance: OutcomeOverrides = OutcomeOverrides()
    action: OutcomeOverrides = OutcomeOverrides()


class ConstraintsSpec(_Block):
    """True hard/soft constraints: Plackett-Luce preference order (engine.preferences) and
    the number of actionable features drawn from ``n_actionable_probs`` (uniform if None;
    one probability per count 1..|F_g|, checked against the scenario by the protocol)."""

    distribution: str = "uniform"
    n_actionable_probs: list[float] | None = None
    cost_slope: float = Field(default=3.0, ge=0)

    @field_validator("distribution")
    @classmethod
    def _known_distribution(cls, name: str) -> str:
        problem = distribution_problem(name)
        if problem:
            raise ValueError(problem)
        return name

    @field_validator("n_actionable_probs")
    @classmethod
    def _probabilities(cls, probs: list[float] | None) -> list[float] | None:
        if probs is not None and (any(v < 0 for v in probs) or sum(probs) <= 0):
            raise ValueError("probabilities must be >= 0 and not all 0")
        return probs


class ReportingSpec(_Block):
    """Elicitation noise: adjacent rank swaps and wrong can/cannot marks, per feature."""

    swap_rate: float = Field(default=0.1, ge=0, le=1)
    mark_error_rate: float = Field(default=0.05, ge=0, le=1)


class SimulationSpec(_Block):
    seed: int = 0
    ratings: RatingOverrides = RatingOverrides()
    constraints: ConstraintsSpec = ConstraintsSpec()
    reporting: ReportingSpec = ReportingSpec()
    hare: HareSpec = HareSpec()
    attention_pass_rate: float = Field(default=0.97, ge=0, le=1)

    def behaviour(self) -> Behaviour:
        """This block as engine behaviour (None keeps the reference value)."""
        ratings = RatingBehaviour.reference()
        outcomes: dict[str, Any] = {}
        for key in ("acceptance", "action"):
            base = getattr(ratings, key)
            over = getattr(self.ratings, key)
            changes: dict[str, Any] = {}
            curve_changes = {k: getattr(over, k) for k in ("drop", "scale")
                             if getattr(over, k) is not None}
            if curve_changes:
                changes["curve"] = dataclasses.replace(base.curve, **curve_changes)
            for k in ("intercept", "satisfaction", "violation", "sd_intercept", "sd_slope"):
                if getattr(over, k) is not None:
                    changes[k] = getattr(over, k)
            if over.cutpoints is not None:
                changes["cutpoints"] = tuple(over.cutpoints)
            outcomes[key] = dataclasses.replace(base, **changes)
        if self.ratings.distance is not None:
            outcomes["distance"] = self.ratings.distance
        c, r, h = self.constraints, self.reporting, self.hare
        return Behaviour(
            ratings=dataclasses.replace(ratings, **outcomes),
            distribution=c.distribution,
            n_actionable_probs=tuple(c.n_actionable_probs) if c.n_actionable_probs else None,
            cost_slope=c.cost_slope, swap_rate=r.swap_rate, mark_error_rate=r.mark_error_rate,
            temperature=h.temperature, threshold=h.threshold, threshold_sd=h.threshold_sd,
            attention_pass_rate=self.attention_pass_rate,
        )
