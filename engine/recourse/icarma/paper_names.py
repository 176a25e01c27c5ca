"""The names of the paper's iCARMA models (engine.papers.icarma.models trains and selects them):
what a method asks the store for, kept apart from the store that builds them."""

from __future__ import annotations

from engine.preferences import COST_PROFILE_EXPONENTS

PAPER_ELICITATIONS: tuple[str, ...] = ("ranking", "likert")


def paper_model_name(
    elicitation: str, cost_profile: str, seed: int | None = None, tag: str = ""
) -> str:
    """Artifact name of one seed's model, or of the selection when ``seed`` is None; ``tag``
    marks a shortened training (``e30``: 30 epochs) so it never replaces the paper's own in
    the cache."""
    if elicitation == "binary":  # the paper: a rank sample with the constant profile
        elicitation, cost_profile = "ranking", "constant"
    if elicitation not in PAPER_ELICITATIONS:
        raise ValueError(f"elicitation must be one of {', '.join(PAPER_ELICITATIONS)}")
    if cost_profile not in COST_PROFILE_EXPONENTS:
        raise ValueError(f"unknown cost profile {cost_profile!r}")
    base = f"icarma-paper-{elicitation}-{cost_profile}" + (f"-{tag}" if tag else "")
    return base if seed is None else f"{base}-s{seed}"
