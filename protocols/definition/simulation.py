"""A protocol's ``simulation`` block: the hidden behaviour of its synthetic participants.

The block overrides the reference behaviour of engine.synthetic (rating model, true
constraints, reporting noise, HARE answers, attention); ``behaviour`` turns it into the
engine's ``Behaviour``. Every check of the block is a validator of its models, so a block
built in Python is checked like one read from YAML.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from engine.metric_names import DISTANCES
from engine.synthetic.participants import Behaviour
from engine.synthetic.rating_model import (
    DistanceCurve,
    OutcomeModel,
    RatingBehaviour,
    curve_scale,
    latent_for_mean,
)
from protocols.definition.problems import report
from protocols.definition.registries import distribution_problem

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
    """Overrides of one rating model's parameters (None keeps the reference value).

    In the researcher's terms (engine.synthetic.rating_model.from_ratings): ``at_zero`` and
    ``at_far`` are the typical participant's mean rating (1..7) of a plan at distance 0 and
    far away, ``half_distance`` the distance where the mean rating is halfway between. On the
    latent (logit) scale, the same curve is ``intercept`` (a), ``drop`` and ``scale``
    (f(d) = -drop (1 - exp(-d / scale))); those names stay as aliases of the others, and
    one curve setting may not be given twice (at_zero with intercept, at_far with drop,
    half_distance with scale). ``curve_of: population`` makes the curve the mean rating over
    all participants rather than the typical participant's (engine.synthetic.rating_model)."""

    at_zero: float | None = Field(default=None, gt=1, lt=7)
    at_far: float | None = Field(default=None, gt=1, lt=7)
    half_distance: float | None = Field(default=None, gt=0)
    intercept: float | None = None
    drop: float | None = None
    scale: float | None = Field(default=None, gt=0)
    satisfaction: float | None = None
    violation: float | None = None
    sd_intercept: float | None = Field(default=None, ge=0)
    sd_slope: float | None = Field(default=None, ge=0)
    cutpoints: list[float] | None = Field(default=None, min_length=6, max_length=6)
    curve_of: Literal["typical", "population"] | None = None

    @field_validator("cutpoints")
    @classmethod
    def _increasing(cls, cuts: list[float] | None) -> list[float] | None:
        if cuts is not None and any(b <= a for a, b in zip(cuts, cuts[1:], strict=False)):
            raise ValueError("must be strictly increasing")
        return cuts

    @model_validator(mode="after")
    def _one_name_each(self) -> OutcomeOverrides:
        twice = [((new,), f"{new} and {old} set the same thing ({new} in mean ratings, {old} "
                  "on the latent scale); keep one")
                 for new, old in (("at_zero", "intercept"), ("at_far", "drop"),
                                  ("half_distance", "scale"))
                 if getattr(self, new) is not None and getattr(self, old) is not None]
        report(twice)
        return self

    def apply(self, base: OutcomeModel) -> OutcomeModel:
        """``base`` with these overrides (the researcher's terms converted first)."""
        cuts = tuple(self.cutpoints) if self.cutpoints is not None else base.cutpoints
        intercept = (latent_for_mean(self.at_zero, cuts) if self.at_zero is not None
                     else self.intercept if self.intercept is not None else base.intercept)
        drop = (intercept - latent_for_mean(self.at_far, cuts) if self.at_far is not None
                else self.drop if self.drop is not None else base.curve.drop)
        if self.half_distance is not None:
            at_zero = OutcomeModel(intercept=intercept, cutpoints=cuts).typical_curve(0.0)
            at_far = OutcomeModel(intercept=intercept - drop, cutpoints=cuts).typical_curve(0.0)
            scale = curve_scale(intercept, drop, self.half_distance,
                                float(at_zero[0] + at_far[0]) / 2, cuts)
        else:
            scale = self.scale if self.scale is not None else base.curve.scale
        changes: dict[str, Any] = {k: getattr(self, k) for k in
                                   ("satisfaction", "violation", "sd_intercept", "sd_slope",
                                    "curve_of")
                                   if getattr(self, k) is not None}
        return dataclasses.replace(base, intercept=intercept, cutpoints=cuts,
                                   curve=DistanceCurve(drop=drop, scale=scale), **changes)


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
    """A protocol's ``simulation`` block: how its synthetic participants behave (module
    docstring); every setting left out keeps the reference behaviour.

    >>> from protocols import SimulationSpec
    >>> spec = SimulationSpec(seed=3)
    >>> spec.seed, spec.ratings.distance is None     # None: the reference behaviour's
    (3, True)
    """

    seed: int = 0
    ratings: RatingOverrides = RatingOverrides()
    constraints: ConstraintsSpec = ConstraintsSpec()
    reporting: ReportingSpec = ReportingSpec()
    hare: HareSpec = HareSpec()
    attention_pass_rate: float = Field(default=0.97, ge=0, le=1)

    def behaviour(self, min_actionable: int = 0) -> Behaviour:
        """This block as engine behaviour (None keeps the reference value);
        ``min_actionable``: the elicitation's ``min_changeable``, which the drawn constraints
        respect."""
        ratings = RatingBehaviour.reference()
        outcomes: dict[str, Any] = {
            key: getattr(self.ratings, key).apply(getattr(ratings, key))
            for key in ("acceptance", "action")}
        if self.ratings.distance is not None:
            outcomes["distance"] = self.ratings.distance
        c, r, h = self.constraints, self.reporting, self.hare
        return Behaviour(
            ratings=dataclasses.replace(ratings, **outcomes),
            distribution=c.distribution,
            n_actionable_probs=tuple(c.n_actionable_probs) if c.n_actionable_probs else None,
            min_actionable=min_actionable,
            cost_slope=c.cost_slope, swap_rate=r.swap_rate, mark_error_rate=r.mark_error_rate,
            temperature=h.temperature, threshold=h.threshold, threshold_sd=h.threshold_sd,
            attention_pass_rate=self.attention_pass_rate,
        )
