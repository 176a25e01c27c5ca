"""Variants of iCARMA's paper configuration in a reproduction: what changes in training and
what the result says about it.

A ``ReproduceConfig`` may ask for a shortened training (``fast``), another hinge weight
(``validity_multiplier`` lagrangian-acting or fixed), each run's best epoch (``keep``),
CARMA's two-logit mask head (``mask_head``), do-values instead of the paper configuration's
clamped latent shifts (``action_space``) or another clamp (``shift_bounds``). Each becomes a
change of ``ICarmaConfig`` (``training_changes``; the models are cached under a tag made of
the changes, engine.papers.icarma.models.training_tag), a note in the result
(``variant_notes``) and entries of the result's config (``variant_config``); ``needed_models``
names the paper's models a target evaluates.
"""

from __future__ import annotations

from typing import Any

from engine.icarma_choices import (
    DEFAULT_MASK_HEAD,
    INTERVENTION,
    PAPER_ACTION_SPACE,
    PAPER_VALIDITY_MULTIPLIER,
)
from engine.papers.icarma.datasets import table_rows
from engine.papers.reproduce_core import ReproduceConfig
from engine.recourse.icarma.config import CARMA_SHIFT_BOUNDS

FAST_EPOCHS = {"ranking": 20, "likert": 20}


def training_changes(config: ReproduceConfig, elicitation: str) -> dict[str, Any]:
    """How a run's iCARMA models differ from the paper's configuration (none by default)."""
    out: dict[str, Any] = {}
    if config.fast:
        out["epochs"] = FAST_EPOCHS[elicitation]
    if config.validity_multiplier == "fixed":
        out["validity_multiplier"] = "fixed"
        out["validity_weight"] = config.weight
    elif config.validity_multiplier != PAPER_VALIDITY_MULTIPLIER:
        out["validity_multiplier"] = config.validity_multiplier
    if config.keep != "last":
        out["keep"] = config.keep
    if config.mask_head != DEFAULT_MASK_HEAD:
        out["mask_head"] = config.mask_head
    if config.action_space != PAPER_ACTION_SPACE:
        out["action_space"] = config.action_space
    elif config.bounds() != config.paper_bounds():
        out["shift_bounds"] = config.bounds()
    return out


def needed_models(config: ReproduceConfig) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """The paper-model setups (elicitation, cost profile) an iCARMA target evaluates, every
    seed of each, and the changes they are trained with; none for the other targets and for
    ``fast`` / ``quick`` runs, which train their short models as they go."""
    if not config.target.startswith("icarma") or config.fast or config.quick:
        return [], {}
    from engine.papers.paper_values import target_values
    from engine.recourse import capabilities

    if config.target == "icarma-fairness":
        elicitation, profiles = "ranking", ["constant"]
    else:
        spec = target_values(config.target)
        elicitation = spec["elicitation"]
        # the trained (amortized) method of the table's rows: iCARMA
        profiles = [r["cost_profile"] for r in table_rows(spec, config.scenario)
                    if capabilities(r["method"]).amortized]
    return ([(elicitation, c) for c in profiles], training_changes(config, elicitation))


def variant_notes(cfg: ReproduceConfig) -> list[str]:
    """One note per way the run's iCARMA training differs from the paper's pipeline (the
    shortened ``fast`` training is noted by the caller, which knows its seeds and draws)."""
    notes = []
    if cfg.keep != "last":
        notes.append(f"each iCARMA run keeps its {cfg.keep} validation-loss epoch instead of "
                     "its last: not the paper's pipeline")
    if cfg.validity_multiplier == "fixed":
        notes.append(f"iCARMA's hinge at a fixed weight {cfg.weight:g} instead of CARMA's "
                     "Lagrange multiplier: a variant of the paper's pipeline")
    elif cfg.validity_multiplier == "lagrangian-acting":
        notes.append("CARMA's multiplier updated on the training draws whose sampled mask "
                     "acts only: a variant of the paper's pipeline")
    if cfg.mask_head != DEFAULT_MASK_HEAD:
        notes.append("iCARMA's mask network with CARMA's two-logit head, deployed as "
                     "1[on-logit > 0] as CARMA's code does: a variant")
    if cfg.action_space == INTERVENTION:
        notes.append("iCARMA's action network proposes do-values instead of the paper "
                     "configuration's clamped shifts of the flow's noise (CARMA's code's "
                     "action): a variant")
    elif cfg.bounds() != cfg.paper_bounds():
        bounds, paper = cfg.bounds(), cfg.paper_bounds()
        clamp = ("the rejected training people's latent range under our flow" if bounds is None
                 else f"[{bounds[0]:g}, {bounds[1]:g}]")
        theirs = ("CARMA's rule under our flow" if paper is None
                  else f"CARMA's {list(CARMA_SHIFT_BOUNDS)}")
        notes.append(f"iCARMA's latent shifts clamped to {clamp} instead of {theirs}: a "
                     "variant")
    return notes


def variant_config(cfg: ReproduceConfig) -> dict[str, Any]:
    """The iCARMA training switches of a run, as its result's config reports them."""
    return {
        "validity_multiplier": cfg.validity_multiplier,
        "validity_weight": cfg.weight,
        "keep": cfg.keep,
        "mask_head": cfg.mask_head,
        "action_space": cfg.action_space,
        "shift_bounds": None if cfg.action_space == INTERVENTION else cfg.bounds() or "flow",
    }


__all__ = ["FAST_EPOCHS", "needed_models", "training_changes", "variant_config",
           "variant_notes"]
