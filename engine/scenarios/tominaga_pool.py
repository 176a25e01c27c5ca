"""Our generator of the reference study's profile pool (the reference user study, Appendix A).

Tominaga et al. collected 4,057 profiles of company and government workers (the 16 items
of their Table 1 plus annual income) and kept the 3,683 that disclosed their income as the
counterfactual pool. That pool is not public, so this module draws a pool of the same size
and shape from a generator of our own. Every choice is written here; nothing is fitted to
the paper's data (which we do not have). Deterministic: ``generate(n, seed)`` returns the
same profiles on every machine (numpy's PCG64 ``default_rng``; a test pins a checksum).

The scenario file engine/scenarios/tominaga.yaml names ``pool_table`` (the pool) and
``applicants_table`` (people like the study's participants) as its generators: rows in
display units, items as the option labels of Table 1 (``LEVELS``; the loader checks each
against the file's levels), income and the loan (one third of it) in million JPY.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pandas as pd

_HOURS = ("0-2 hours", "2-4 hours", "4-6 hours", "6-8 hours", "8-10 hours", "10-12 hours",
          "12 hours or more")
_NO_YES = ("No", "Yes")
# The options of Table 1, in its order; a count's or score's "No" reads "None" / "No score"
# on a participant's page ("3 jobs -> None", not "3 jobs -> No").
LEVELS: dict[str, tuple[str, ...]] = {
    "residence": ("Tokyo", "Other than Tokyo"),
    "housing": ("Owned house", "Rental housing"),
    "education": ("High school", "Junior college", "University (bachelor)",
                  "Graduate school (master)", "Graduate school (doctor)"),
    "workplace": ("Private company", "Public institution"),
    "position": ("Employee", "Supervisor", "Section Head", "Section Chief",
                 "Assistant General Manager", "Manager", "General Manager",
                 "Executive Director", "Senior Executive Director", "President"),
    "service_years": ("0-1 year", "1-3 years", "3-5 years", "5-10 years", "10-20 years",
                      "20 years or more"),
    "management": ("None", "0-1 year", "1-3 years", "3-5 years", "5-10 years", "10-20 years",
                   "20 years or more"),
    "working_hours": _HOURS,
    "telework_hours": _HOURS,
    "side_jobs": ("None", "1 job", "2 jobs", "3 jobs", "4 jobs", "5 jobs or more"),
    "job_change": _NO_YES,
    "overseas_work": _NO_YES,
    "overseas_study": _NO_YES,
    "toeic": ("No score", "10-400", "400-495", "500-595", "600-695", "700-795", "800-895",
              "900-990"),
    "facebook": _NO_YES,
    "linkedin": _NO_YES,
}
ITEMS: tuple[str, ...] = tuple(LEVELS)
LOAN_SHARE = 1.0 / 3.0  # the loan applied for: one third of annual income (section 3.1.2)
POOL_SIZE = 4_057  # profiles collected (Appendix A)
UNDISCLOSED = 374  # of which did not disclose their income: 4,057 - 3,683
_START_AGE = np.array([18.0, 20.0, 22.0, 24.0, 27.0])
_POSITION_CUTS = np.array([1.6, 2.4, 2.9, 3.4, 3.9, 4.5, 5.1, 5.7, 6.4])
_EDU_SHARES = (0.30, 0.15, 0.45, 0.08, 0.02)
# standard normal quantiles at the cumulative shares: the schooling score's level cuts
_EDU_CUTS = np.array([NormalDist().inv_cdf(q) for q in np.cumsum(_EDU_SHARES)[:-1]])
_G_EDU, _G_CAREER, _G_TOEIC = 0.9, 0.7, 0.7  # loadings on the common factor (step 0)


def _on_factor(g: np.ndarray, loading: float, rng: np.random.Generator) -> np.ndarray:
    """A standard normal score correlated ``loading`` with the common factor ``g`` (step 0):
    loading * g + sqrt(1 - loading^2) * N(0, 1), one fresh draw per person."""
    return loading * g + np.sqrt(1.0 - loading**2) * rng.normal(0.0, 1.0, g.shape[0])


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _years_bin(years: np.ndarray, edges: tuple[float, ...]) -> np.ndarray:
    return np.searchsorted(np.asarray(edges), years, side="right")


# Codes are 0-based option indices of Table 1 (0 = the first option). For each person:
#
# 0. A common factor g ~ Normal(0, 1) (ability and ambition, the omitted-ability structure
#    of earnings data): it raises schooling, the career score, experience abroad and the
#    English score together, so credentials and seniority go together as they do in people.
#    Without it (the generator's first version) those blocks were nearly independent given
#    education, and a simulated participant high on several never-lower items (a graduate
#    degree, experience abroad, a high TOEIC band, long service) rarely had five richer pool
#    members at least as high on all of them: 95% of 1,000 applicants had five eligible pool
#    members, where the paper gave every one of its 362 participants five (1,810 ratings).
#    The loadings, the income level and its noise below were set by hand so that the
#    generator meets the two facts the paper reports about its pool: 99% of the 1,000 test
#    applicants have five eligible members (the selection rule unchanged), and 61 of 3,683
#    (1.7%) earn over 13M JPY (the paper: 54, 1.47%; Appendix A). The shares of the levels
#    of each item stay close to the first version's (education's exactly).
# 1. Age a ~ Normal(42, 11) clipped to 20..64 (working age; not an item, it only links the
#    career items below).
# 2. Education (0 high school, 1 junior college, 2 bachelor, 3 master, 4 doctor) with
#    probabilities .30/.15/.45/.08/.02: a schooling score 0.9 g + sqrt(1 - 0.81) N(0, 1) cut
#    at the standard normal quantiles of those shares; the age work starts, s_e =
#    18/20/22/24/27. Career years c = max(0, a - s_e).
# 3. Job change experience: P = sigmoid(-1.2 + 0.06 c). Service years at the current
#    employer t = c without a job change, else t = c * U(0.05, 0.8). Binned to
#    0-1/1-3/3-5/5-10/10-20/"20 years or more" (bin edges 1, 3, 5, 10, 20).
# 4. Position: latent score z = 0.06 c + 0.3 * education + 0.03 t + 0.7 g + sqrt(1 - 0.49)
#    N(0, 1); the ten levels cut z at 1.6, 2.4, 2.9, 3.4, 3.9, 4.5, 5.1, 5.7, 6.4 (Employee
#    ... President), so most people are employees or first-line supervisors and the top
#    levels are rare.
# 5. Management career: none below Section Head (level index < 2); otherwise years m =
#    min(c, (position - 1) * 2.5 * U(0.15, 1.3)), binned No/0-1/1-3/3-5/5-10/10-20/20-
#    (a manager has at least "0-1 year").
# 6. Residence: Tokyo with P .25. Type of residence: owned with P = sigmoid(-2.2 + 0.09 (a -
#    22) - 0.5 Tokyo). Workplace: public institution with P .15.
# 7. Working hours per day (0-2 ... 12-): probabilities .01/.03/.08/.46/.32/.08/.02,
#    shifted up one level with P .3 for managers. Teleworking hours: .62/.12/.09/.1/.05/.015
#    /.005, with P .25 one level higher in Tokyo (capped at the working hours' level).
# 8. Side jobs (No, 1, 2, 3, 4, 5-): .86/.09/.03/.012/.005/.003.
# 9. Overseas working experience: P = sigmoid(-3.7 + 0.45 education + 0.02 c + g); overseas
#    study: P = sigmoid(-3.6 + 0.6 education + g).
# 10. TOEIC best score: no score with P = sigmoid(0.9 - 0.45 education - 1.2 overseas work -
#     1.2 overseas study); otherwise a latent s = 1.9 + 0.5 education + 1.2 overseas work +
#     1.0 overseas study + 1.1 (0.7 g + sqrt(1 - 0.49) N(0, 1)), rounded and clipped to the
#     seven score bands (10-400 ... 900-990).
# 11. Facebook: P = sigmoid(0.3 - 0.03 (a - 22) + 0.3 overseas); LinkedIn: P = sigmoid(-3.0
#     + 0.3 education + 1.0 overseas work + 0.3 TOEIC band / 7).
# 12. Annual income (million JPY): log income = log 1.95 + 0.01 min(c, 35) + 0.1 position
#     + 0.07 education + 0.12 Tokyo + 0.05 public + 0.06 (working-hours level - 3)
#     + 0.08 side jobs (capped at 2) + 0.012 min(t, 30) (seniority pay) + 0.04 TOEIC band
#     + 0.1 overseas work + N(0, 0.25), clipped to 1.0..25.0, rounded to 0.1.
# 13. Disclosure: 374 of 4,057 people (9.2%, the paper's share) chosen at random do not
#     disclose their income; they are dropped from the counterfactual pool (3,683 remain).
def generate(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(items (n, 16) int codes in ``ITEMS`` order, income (n,) million JPY) of n people
    (module docstring).
    """
    rng = np.random.default_rng(seed)
    age = np.clip(rng.normal(42.0, 11.0, n), 20.0, 64.0)
    g = rng.normal(0.0, 1.0, n)  # the common factor (step 0)
    schooling = _on_factor(g, _G_EDU, rng)
    edu = np.searchsorted(_EDU_CUTS, schooling)
    career = np.maximum(0.0, age - _START_AGE[edu])
    job_change = rng.random(n) < _sigmoid(-1.2 + 0.06 * career)
    tenure = np.where(job_change, career * rng.uniform(0.05, 0.8, n), career)
    service = _years_bin(tenure, (1, 3, 5, 10, 20))
    z = 0.06 * career + 0.3 * edu + 0.03 * tenure + _on_factor(g, _G_CAREER, rng)
    position = np.searchsorted(_POSITION_CUTS, z, side="right")
    mgmt_years = np.minimum(career, (position - 1) * 2.5 * rng.uniform(0.15, 1.3, n))
    management = np.where(position >= 2,
                          np.maximum(1, 1 + _years_bin(mgmt_years, (1, 3, 5, 10, 20))), 0)
    tokyo = rng.random(n) < 0.25
    owned = rng.random(n) < _sigmoid(-2.2 + 0.09 * (age - 22.0) - 0.5 * tokyo)
    public = rng.random(n) < 0.15
    hours = rng.choice(7, size=n, p=[0.01, 0.03, 0.08, 0.46, 0.32, 0.08, 0.02])
    hours = np.minimum(6, hours + ((management > 0) & (rng.random(n) < 0.3)))
    tele = rng.choice(7, size=n, p=[0.62, 0.12, 0.09, 0.10, 0.05, 0.015, 0.005])
    tele = np.minimum(hours, tele + (tokyo & (rng.random(n) < 0.25)))
    side = rng.choice(6, size=n, p=[0.86, 0.09, 0.03, 0.012, 0.005, 0.003])
    abroad_work = rng.random(n) < _sigmoid(-3.7 + 0.45 * edu + 0.02 * career + g)
    abroad_study = rng.random(n) < _sigmoid(-3.6 + 0.6 * edu + g)
    no_score = rng.random(n) < _sigmoid(0.9 - 0.45 * edu - 1.2 * abroad_work
                                        - 1.2 * abroad_study)
    band = np.clip(np.rint(1.9 + 0.5 * edu + 1.2 * abroad_work + 1.0 * abroad_study
                           + 1.1 * _on_factor(g, _G_TOEIC, rng)), 1, 7).astype(int)
    toeic = np.where(no_score, 0, band)
    facebook = rng.random(n) < _sigmoid(0.3 - 0.03 * (age - 22.0) + 0.3 * abroad_work)
    linkedin = rng.random(n) < _sigmoid(-3.0 + 0.3 * edu + 1.0 * abroad_work + 0.3 * toeic / 7)
    log_income = (np.log(1.95) + 0.01 * np.minimum(career, 35.0) + 0.1 * position
                  + 0.07 * edu + 0.12 * tokyo + 0.05 * public + 0.06 * (hours - 3)
                  + 0.08 * np.minimum(side, 2) + 0.012 * np.minimum(tenure, 30.0)
                  + 0.04 * toeic + 0.1 * abroad_work + rng.normal(0.0, 0.25, n))
    income = np.round(np.clip(np.exp(log_income), 1.0, 25.0), 1)
    items = np.column_stack([
        (~tokyo).astype(int), (~owned).astype(int), edu, public.astype(int), position,
        service, management, hours, tele, side, job_change.astype(int),
        abroad_work.astype(int), abroad_study.astype(int), toeic, facebook.astype(int),
        linkedin.astype(int),
    ]).astype(np.int64)
    return items, income


def pool(seed: int = 2023) -> tuple[np.ndarray, np.ndarray]:
    """The counterfactual pool: the 4,057 generated profiles minus the 374 that do not
    disclose their income (module docstring, step 13) -> (items (3,683, 16), income)."""
    items, income = generate(POOL_SIZE, seed)
    hidden = np.random.default_rng([seed, 1]).choice(POOL_SIZE, UNDISCLOSED, replace=False)
    keep = np.ones(POOL_SIZE, dtype=bool)
    keep[hidden] = False
    return items[keep], income[keep]


def applicants(n: int, seed: int, max_income: float = 10.0) -> tuple[np.ndarray, np.ndarray]:
    """n people like the study's participants: the generator's people whose income is below
    ``max_income`` million JPY (the study's screening, section 3.3.1), drawn at ``seed``."""
    items, income = generate(4 * n, seed)
    keep = np.flatnonzero(income < max_income)[:n]
    if len(keep) < n:
        raise ValueError(f"only {len(keep)} of {4 * n} generated people earn below "
                         f"{max_income}M JPY; ask for fewer")
    return items[keep], income[keep]


def table(items: np.ndarray, income: np.ndarray) -> pd.DataFrame:
    """Profiles in display units: option labels, income and loan (million JPY)."""
    cols = {name: np.asarray(LEVELS[name], dtype=object)[items[:, j]]
            for j, name in enumerate(ITEMS)}
    return pd.DataFrame({**cols, "income": income,
                         "loan_amount": np.round(LOAN_SHARE * income, 10)})


def pool_table(seed: int = 2023) -> pd.DataFrame:
    """The counterfactual pool (``pool``) as a scenario file's generator; each member
    carries the loan they would apply for (one third of their own income)."""
    return table(*pool(seed))


def applicants_table(seed: int = 2024, n: int = 2_000) -> pd.DataFrame:
    """``n`` applicants earning below 10M JPY (``applicants``) as a scenario file's
    generator: the people a simulated study's participants are drawn from."""
    return table(*applicants(n, seed))
