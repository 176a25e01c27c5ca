"""The reference user study's world (Tominaga et al., paper 003): 16 profile items, annual
income, a loan of one third of it, a hidden rule that rejects everybody, a profile pool.

Features, in column order: the 16 items of the paper's Table 1 (option codes 0.., labels as
in the paper), then ``income`` (annual income, million JPY, entered by the participant) and
``loan_amount`` (million JPY, one third of the entered income, repaid over 24 months).

- Change constraints (Table 1): education, position, service years and management career
  never go down; job change, overseas work and study experience and the TOEIC score are
  never lost (direction +1); the other items may change either way.
- Distances (Eq. 2-3): delta_i = 1[x'_i != x_i] for the nominal items (residential
  prefecture, type of residence, workplace) and |x'_i - x_i| / M_i for the ordered ones,
  M_i = number of options - 1 (the whole option range, so each delta lies in [0, 1]).
  Income and the loan are conditions of the decision, not plan items: never shown as plan
  rows, never acted on (income changes only as the adopted pool profile's, so L0/L1 over
  the *actions* are the paper's sparsity and proximity over the 16 items).
- The rule (section 3.1.2, hidden from participants): approve iff income >= 4 x loan.
  A participant's own loan is income / 3, so everybody is rejected; a pool member's
  profile with the participant's loan is approved iff its income >= 4/3 of theirs.
- Pool: engine.scenarios.tominaga_pool (our documented generator; 3,683 profiles with
  income), each carrying its own loan (income / 3, so the rule rejects them as applicants
  too); the applicants (validation/test splits, 2 x 1,000 people earning below 10M JPY, the
  study's screening) are drawn from the same generator with another seed.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from torch import Tensor

from engine.scenarios.base import DisplayMap, FeatureSpec, Role, Scenario
from engine.scenarios.pool_world import PoolRuleSamples, PoolWorld
from engine.scenarios.tominaga_pool import ITEMS, applicants, pool

HOURS = ("0-2 hours", "2-4 hours", "4-6 hours", "6-8 hours", "8-10 hours", "10-12 hours",
         "12- hours")
NO_YES = ("No", "Yes")
# name -> (label, options, direction, nominal)
TABLE_1: dict[str, tuple[str, tuple[str, ...], int, bool]] = {
    "residence": ("Residential prefecture", ("Tokyo", "Other than Tokyo"), 0, True),
    "housing": ("Type of residence", ("Owned house", "Rental housing"), 0, True),
    "education": ("Educational background", (
        "High school", "Junior college", "University (bachelor)",
        "Graduate school (master)", "Graduate school (doctor)"), +1, False),
    "workplace": ("Workplace", ("Private company", "Public institution"), 0, True),
    "position": ("Position", (
        "Employee", "Supervisor", "Section Head", "Section Chief",
        "Assistant General Manager", "Manager", "General Manager", "Executive Director",
        "Senior Executive Director", "President"), +1, False),
    "service_years": ("Service years", (
        "0-1 year", "1-3 years", "3-5 years", "5-10 years", "10-20 years", "20- years"),
        +1, False),
    "management": ("Management career", (
        "No", "0-1 year", "1-3 years", "3-5 years", "5-10 years", "10-20 years",
        "20- years"), +1, False),
    "working_hours": ("Working hours per day", HOURS, 0, False),
    "telework_hours": ("Teleworking hours per day", HOURS, 0, False),
    "side_jobs": ("The number of side jobs", (
        "No", "1 job", "2 jobs", "3 jobs", "4 jobs", "5- jobs"), 0, False),
    "job_change": ("Job change experience", NO_YES, +1, False),
    "overseas_work": ("Overseas working experience", NO_YES, +1, False),
    "overseas_study": ("Overseas study experience", NO_YES, +1, False),
    "toeic": ("TOEIC best score", (
        "No", "10-400", "400-495", "500-595", "600-695", "700-795", "800-895", "900-990"),
        +1, False),
    "facebook": ("Facebook app use", NO_YES, 0, False),
    "linkedin": ("LinkedIn app use", NO_YES, 0, False),
}
INCOME, LOAN = len(ITEMS), len(ITEMS) + 1
LOAN_SHARE = 1.0 / 3.0  # the loan: one third of annual income (section 3.1.2)
RULE_MULTIPLE = 4.0  # approved iff income >= 4 x loan
POOL_SEED, APPLICANT_SEED, APPLICANTS = 2023, 2024, 2_000


def rule(x: Tensor) -> Tensor:
    """income - 4 x loan: >= 0 approves (the hidden fixed rule)."""
    return x[:, INCOME] - RULE_MULTIPLE * x[:, LOAN]


def _profiles(items: np.ndarray, income: np.ndarray) -> np.ndarray:
    return np.column_stack([items.astype(float), income, LOAN_SHARE * income])


@lru_cache(maxsize=1)
def pool_profiles() -> np.ndarray:
    """(3,683, 18) the counterfactual pool in model units (each with its own loan)."""
    return _profiles(*pool(POOL_SEED))


@lru_cache(maxsize=1)
def applicant_profiles() -> np.ndarray:
    """(2,000, 18) generated applicants earning below 10M JPY (the study's screening)."""
    return _profiles(*applicants(APPLICANTS, APPLICANT_SEED))


def features() -> tuple[FeatureSpec, ...]:
    items = tuple(
        FeatureSpec(name, label, Role.ACTIONABLE,
                    DisplayMap("categorical", "", categories=options),
                    direction=direction, discrete=nominal, range=float(len(options) - 1))
        for name, (label, options, direction, nominal) in TABLE_1.items())
    money = DisplayMap("affine", "million JPY", decimals=1)
    return (*items,
            FeatureSpec("income", "Annual income", Role.MUTABLE, money,
                        help="Your annual income before taxes, in million JPY "
                        "(e.g. 4.5 for 4,500,000 JPY).", in_plan=False),
            FeatureSpec("loan_amount", "Car loan (24 months)", Role.IMMUTABLE,
                        DisplayMap("affine", "million JPY", decimals=2),
                        help="One third of your annual income, repaid over two years.",
                        in_plan=False, derived_from=("income", LOAN_SHARE)))


def make_tominaga() -> Scenario:
    """The reference study's world (module docstring)."""
    feats = features()
    names = tuple(f.name for f in feats)
    levels = {j: len(f.display.categories) for j, f in enumerate(feats)
              if f.display.kind == "categorical"}
    return Scenario(
        name="tominaga",
        title="Car loan (Tominaga et al.'s profile items)",
        features=feats,
        scm=PoolWorld(names, rule, pool_profiles, levels),  # type: ignore[arg-type]
        samples=PoolRuleSamples(pool_profiles, applicant_profiles,  # type: ignore[arg-type]
                                source="engine.scenarios.tominaga_pool, seeds 2023/2024"),
        story=(
            "You want to take out a two-year car loan equivalent to one third of your annual "
            "income. The financial institution screens your application with an AI system "
            "that uses its extensive database of customer information."
        ),
    )
