"""Ratings with known truth, in the shape of the store's ``ratings_long`` view.

``simulate_ratings`` draws P participants x J plans from engine.synthetic.rating_model (the synthetic
participants' cumulative-logit model): distance d ~ Uniform(0, d_max) (the reference
study's L1 spread), satisfaction s ~ Uniform(0, 1), violation v ~ Bernoulli(p_violation),
arm uniform over ``arms`` (no arm effect), participant random intercepts and slopes from
the behaviour. Used by the analysis benchmark, the parameter-recovery study and tests.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.synthetic.rating_model import RatingBehaviour


def simulate_ratings(
    participants: int,
    plans: int,
    *,
    behaviour: RatingBehaviour | None = None,
    seed: int = 0,
    d_max: float = 0.8,
    p_violation: float = 0.2,
    arms: tuple[str, ...] = ("a", "b", "c"),
) -> pd.DataFrame:
    """A ratings_long-shaped frame (distance in ``behaviour.distance``).

    >>> from analysis import simulate_ratings
    >>> ratings = simulate_ratings(participants=6, plans=4, seed=1)
    >>> len(ratings), sorted(ratings["arm"].unique()), ratings["participant_id"].nunique()
    (24, ['a', 'b', 'c'], 6)
    >>> bool(ratings["acceptance"].between(1, 7).all())
    True
    """
    if participants < 1 or plans < 1:
        raise ValueError("participants and plans must be >= 1")
    behaviour = behaviour or RatingBehaviour.reference()
    rng = np.random.default_rng(seed)
    n = participants * plans
    pid = np.repeat(np.arange(participants), plans)
    d = rng.uniform(0.0, d_max, n)
    s = rng.uniform(0.0, 1.0, n)
    v = (rng.uniform(size=n) < p_violation).astype(float)
    effects = behaviour.draw_effects(participants, rng)
    out = pd.DataFrame({
        "study_id": "simulated", "participant_id": [f"p{i:04d}" for i in pid],
        "plan_id": [f"p{i:04d}-{j}" for i, j in zip(pid, np.tile(np.arange(plans), participants),
                                                      strict=True)],
        "arm": rng.choice(list(arms), n), "method": "simulated",
        "position": np.tile(np.arange(plans), participants),
        behaviour.distance: d, "satisfaction": s, "violation": v, "source": "synthetic",
    })
    for name, model, key in (("acceptance", behaviour.acceptance, "acc"),
                             ("action", behaviour.action, "act")):
        eta = model.latent(d, s, v, effects[f"u_{key}"][pid], effects[f"b_{key}"][pid])
        out[name] = model.sample(eta, rng)
    return out


def simulate_import(
    participants: int,
    plans: int,
    *,
    seed: int = 0,
    arms: tuple[str, ...] = ("a", "b"),
    satisfaction: bool = True,
    violation: bool = True,
    behaviour: RatingBehaviour | None = None,
) -> pd.DataFrame:
    """Ratings with known truth in the shape ``recourse-study import-ratings`` reads
    (data.imports): participant_id, plan_id, l0, l1, acceptance, action and, as asked,
    satisfaction, violation and arm (``arms=()``: no arm column, one arm).

    The ratings are ``simulate_ratings``' (driven by l1 = the behaviour's distance); l0, the
    number of changed items, coarsens l1 (1 + floor(l1 / 0.2), capped at 4) and moves one
    step up or down for 30% of the plans, so L0 and L1 are related but L1 is the truth. A
    column left out was still part of the truth (an omitted variable, as in real data)."""
    behaviour = behaviour or RatingBehaviour.reference()
    r = simulate_ratings(participants, plans, behaviour=behaviour, seed=seed,
                         arms=arms or ("-",))
    rng = np.random.default_rng([seed, 1])
    d = r[behaviour.distance].to_numpy()
    shift = rng.integers(-1, 2, d.size) * (rng.uniform(size=d.size) < 0.3)
    out = pd.DataFrame({
        "participant_id": r["participant_id"], "plan_id": r["plan_id"],
        "l0": np.clip(1 + np.floor(d / 0.2) + shift, 1, 4).astype(int), "l1": d.round(6),
        "acceptance": r["acceptance"], "action": r["action"],
    })
    if satisfaction:
        out["satisfaction"] = r["satisfaction"].round(6)
    if violation:
        out["violation"] = r["violation"].astype(int)
    if arms:
        out["arm"] = r["arm"]
    return out
