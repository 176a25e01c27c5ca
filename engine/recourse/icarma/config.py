"""iCARMA's training configurations: the paper's (the default) and our faster one.

``ICarmaConfig()`` is the paper's rank-based setting (the iCARMA paper, App. C.2.4):
batch 128, 450 epochs, Adam at a constant lr 0.005, hinge margin 0.013 on 2 h - 1 weighted
by a Lagrange multiplier (engine.recourse.icarma.training), Gumbel tau 0.36, cost
weight 1.1, plausibility 0.225, feasibility 0.1, mask KL 1.5, one model per
cost profile, the final state of each run kept; seeds 1000, 2000, ... and the best seed on
validation reported (engine.artifacts). ``ICarmaConfig.paper("likert", profile)`` is the
score-based setting: 900 epochs, lr 0.001, margin 0.004, tau 0.49, cost 1.3, KL 0.9,
plausibility 0.125, feasibility 0.1.

Two things the paper leaves open are named fields. The action (``action_space``): the paper
describes the flow's counterfactual by the do-operator but not how the action network's
output becomes an action; CARMA's reference code, which iCARMA extends, shifts the flow's
noise of the masked features, u' = u + m s, with s clamped to (floor min u, ceil max u) over
the latents of the training people its classifier rejects, (-4, 5) under its own published
Loan flow (``CARMA_SHIFT_BOUNDS``); the paper configuration acts so (``latent-shift``),
``intervention`` (do-values in range units) is a named variant and our fast configuration's
action. The hinge's weight (``validity_multiplier``): ``lagrangian`` (CARMA's reference rule,
the default), ``lagrangian-acting`` (the multiplier updated over acting draws only) or
``fixed`` at ``validity_weight`` (``CALIBRATED_VALIDITY_WEIGHT`` = 8 fits Table 1's
plausibility). How each reading reproduces Tables 1-3: docs/reproductions/icarma.md, "The
training readings compared".

``ICarmaConfig.fast()`` is our configuration for interactive use (what ``train`` builds for
studies): the same losses but 60 epochs, a cosine learning-rate decay, the hinge on the logit
with the equivalent margin 2 artanh(eps) (its gradient does not vanish for confident
rejections) at a fixed weight 1, one model shared by the four cost profiles (each person's
profile draws one), the best validation-loss epoch kept, and an empty deterministic mask filled
with the most probable actionable feature. ``reduced()`` shrinks either for tests.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from engine.icarma_choices import (
    ACTION_SPACES,
    DEFAULT_MASK_HEAD,
    INTERVENTION,
    MASK_HEADS,
    PAPER_ACTION_SPACE,
    PAPER_VALIDITY_MULTIPLIER,
    VALIDITY_MULTIPLIERS,
)
from engine.preferences import COST_PROFILE_EXPONENTS, SCORE_SAMPLINGS
from engine.recourse.icarma.networks import check_shift_bounds

VALIDITY_LOSSES: tuple[str, ...] = ("hinge-probability", "hinge-logit")
SCHEDULES: tuple[str, ...] = ("constant", "cosine")
KEEP: tuple[str, ...] = ("last", "best")
TRAININGS: tuple[str, ...] = ("paper", "fast")
PAPER_SEED_STEP = 1000  # the paper's seeds: 1000, 2000, ..., 10000
# CARMA's clamp of its latent shifts: (floor min z, ceil max z) over the latents of the
# training people its classifier rejects (its main.py filters the data by the classifier's
# label, then sets its z_clipper), computed with CARMA's own published Loan flow (its
# reference code's checkpoint _models_trained/causal_nf/loan_non-linear) on CARMA's published
# recourse training samples rejected by our CARMA-recipe decision model: min -3.93, max 4.12.
# Our flow on the same people gives min -4.12, max 3.85, so the rule would give (-5, 4)
# under it (README "Reproducing the papers").
CARMA_SHIFT_BOUNDS: tuple[float, float] = (-4.0, 5.0)

# The paper's score-based (Likert) hyper-parameters (its appendix C).
_LIKERT: dict[str, Any] = {
    "epochs": 900,
    "lr": 0.001,
    "hinge_margin": 0.004,
    "tau": 0.49,
    "cost_weight": 1.3,
    "kl_weight": 0.9,
    "plausibility_weight": 0.125,
    "feasibility_weight": 0.1,
}


# The paper's GiveMeSomeCredit hyper-parameters (its appendix C.3.3; rankings). Its latent
# shifts are clamped by CARMA's rule under our flow (the Loan bounds above are Loan's).
_GMSC: dict[str, Any] = {
    "epochs": 400,
    "batch_size": 256,
    "lr": 0.001,
    "hinge_margin": 0.013,
    "tau": 0.33,
    "cost_weight": 1.1,
    "kl_weight": 1.1,
    "plausibility_weight": 0.04,
    "feasibility_weight": 0.09,
    "shift_bounds": None,
}


@dataclass(frozen=True)
class ICarmaConfig:
    """Hyper-parameters (module docstring); the defaults are the paper's ranking setting.

    Named switches (fields): ``validity_loss`` hinge-probability | hinge-logit;
    ``validity_multiplier`` lagrangian | lagrangian-acting | fixed (with ``validity_weight``);
    ``schedule`` constant | cosine; ``keep`` last | best; ``score_sampling`` iid | sorted
    (engine.preferences.sample_profiles); ``cost_profiles`` the profiles one model is trained
    for; ``fill_empty_mask`` (validation: a person whose deterministic mask is empty gets the
    most probable actionable feature; the paper: no action; engine.recourse.icarma.networks).
    ``mask_head`` log-odds | carma (the mask network's output and deployment rule: ours, or
    CARMA's reference code's two logits per feature deployed as 1[phi_on > 0]).
    ``action_space`` latent-shift | intervention with ``shift_bounds`` the clamp of latent
    shifts (``CARMA_SHIFT_BOUNDS`` by default; None: CARMA's rule under our flow, floor / ceil
    of the abducted noise of the rejected training people; ignored under intervention).
    ``to_dict`` omits ``fill_empty_mask`` when it is True, ``mask_head`` when it is log-odds and
    ``action_space`` and ``shift_bounds`` under intervention, the behaviour of every model
    trained before the fields existed (``from_dict`` restores them), so their fingerprints
    (engine.artifacts) are unchanged.
    """

    epochs: int = 450
    batch_size: int = 128
    lr: float = 0.005
    hinge_margin: float = 0.013
    validity_weight: float = 1.0
    tau: float = 0.36
    cost_weight: float = 1.1
    plausibility_weight: float = 0.225
    feasibility_weight: float = 0.1
    kl_weight: float = 1.5
    hidden: tuple[int, ...] = (64, 64)
    individual: bool = True
    elicitation: str = "ranking"
    cost_profiles: tuple[str, ...] = ("constant",)
    validity_loss: str = "hinge-probability"
    validity_multiplier: str = PAPER_VALIDITY_MULTIPLIER
    lagrange_damping: float = 10.0
    lagrange_step: float = 1.0
    schedule: str = "constant"
    keep: str = "last"
    score_sampling: str = "iid"
    fill_empty_mask: bool = False
    mask_head: str = DEFAULT_MASK_HEAD
    action_space: str = PAPER_ACTION_SPACE
    shift_bounds: tuple[float, float] | None = CARMA_SHIFT_BOUNDS  # None: the rule, our flow
    max_people: int | None = None
    eval_every: int = 5
    seed: int = PAPER_SEED_STEP

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 1 or self.eval_every < 1:
            raise ValueError("epochs, batch_size and eval_every must be >= 1")
        if self.tau <= 0 or self.lr <= 0:
            raise ValueError("tau and lr must be positive")
        if self.lagrange_damping < 0 or self.lagrange_step <= 0:
            raise ValueError("lagrange_damping must be >= 0 and lagrange_step > 0")
        if not 0 < self.hinge_margin < 1:
            raise ValueError("hinge_margin must lie in (0, 1) (a margin on 2 h - 1)")
        unknown = [c for c in self.cost_profiles if c not in COST_PROFILE_EXPONENTS]
        if unknown or not self.cost_profiles:
            raise ValueError(
                f"cost_profiles must be a non-empty subset of {', '.join(COST_PROFILE_EXPONENTS)}"
            )
        for name, value, allowed in (
            ("validity_loss", self.validity_loss, VALIDITY_LOSSES),
            ("validity_multiplier", self.validity_multiplier, VALIDITY_MULTIPLIERS),
            ("schedule", self.schedule, SCHEDULES),
            ("keep", self.keep, KEEP),
            ("score_sampling", self.score_sampling, SCORE_SAMPLINGS),
            ("mask_head", self.mask_head, MASK_HEADS),
            ("action_space", self.action_space, ACTION_SPACES),
        ):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
        if self.shift_bounds is not None:
            check_shift_bounds(self.shift_bounds)

    # ---- presets ------------------------------------------------------------------------
    @classmethod
    def paper(
        cls, elicitation: str = "ranking", cost_profile: str = "constant", seed: int = 1000,
        dataset: str = "loan",
    ) -> ICarmaConfig:
        """The paper's configuration for one elicitation scheme and one cost profile, on its
        ``dataset`` loan (Likert scores: their own hyper-parameters) or gmsc (App. C.3.3)."""
        if dataset not in ("loan", "gmsc"):
            raise ValueError(f"the paper's data sets are loan and gmsc, got {dataset!r}")
        extra = _GMSC if dataset == "gmsc" else _LIKERT if elicitation == "likert" else {}
        return cls(
            elicitation=elicitation, cost_profiles=(cost_profile,), seed=seed, **extra
        )

    @classmethod
    def fast(cls, elicitation: str = "ranking", **overrides: Any) -> ICarmaConfig:
        """Our fast configuration (module docstring): one model for every cost profile."""
        extra = {k: v for k, v in _LIKERT.items() if k != "epochs"}
        base: dict[str, Any] = {
            **(extra if elicitation == "likert" else {}),
            "elicitation": elicitation,
            "epochs": 60,
            "cost_profiles": tuple(COST_PROFILE_EXPONENTS),
            "validity_loss": "hinge-logit",
            "validity_multiplier": "fixed",
            "schedule": "cosine",
            "keep": "best",
            "score_sampling": "sorted",
            "fill_empty_mask": True,
            "action_space": INTERVENTION,
            "seed": 0,
        }
        return cls(**{**base, **overrides})

    def reduced(self, **overrides: Any) -> ICarmaConfig:
        """This configuration for tests: few people, few epochs (well under a minute)."""
        base = {"epochs": 20, "batch_size": 128, "max_people": 768, "eval_every": 5}
        return replace(self, **{**base, **overrides})

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["hidden"] = list(self.hidden)
        out["cost_profiles"] = list(self.cost_profiles)
        if self.fill_empty_mask:
            del out["fill_empty_mask"]
        if self.mask_head == DEFAULT_MASK_HEAD:
            del out["mask_head"]
        if self.action_space == INTERVENTION:
            del out["action_space"], out["shift_bounds"]
        elif self.shift_bounds is not None:
            out["shift_bounds"] = list(self.shift_bounds)
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ICarmaConfig:
        d = {"fill_empty_mask": True, "action_space": INTERVENTION, **d}
        d["hidden"] = tuple(d["hidden"])
        d["cost_profiles"] = tuple(d["cost_profiles"])
        if d.get("shift_bounds") is not None:
            d["shift_bounds"] = tuple(d["shift_bounds"])
        return cls(**d)
