"""Two analyses of one study side by side: are their estimates the same up to Monte Carlo error?

A change to how ``analyze`` runs (compiling once, fitting R beside the sampler, another
sampler setting) must leave what it estimates as it was. Two ``summary.json`` files of the
same study (before and after the change) are compared model by model:

- every posterior mean a model reports (its coefficients and its smooth on the grid) against
  its Monte Carlo standard error. A mean's MCSE is sd / sqrt(ESS); the posterior sd is read
  from the reported central interval, sd = (hi - lo) / (2 z) with z = Phi^-1(1 - (1 - level)
  / 2) (level 0.94 for coefficients, 0.95 for smooths: analysis.results), and ESS is the
  model's smallest bulk ESS (so the MCSE is the largest any of its parameters has: a lenient
  bound for the well-mixed ones). The difference of the two runs' means in MCSE units,

      z = (m_a - m_b) / sqrt(mcse_a^2 + mcse_b^2),

  is about standard normal when both runs sample the same posterior; a model differs when
  some |z| exceeds ``Z_MAX`` (4: with ~600 means per analysis, a chance exceedance has
  probability ~0.04 per analysis even if every mean were independent);
- PSIS-LOO's elpd per model: the difference against its standard error (``se``);
- parameter recovery (a simulated study's truth_vs_recovered): the same recovered shape
  and the same true effects covered by the 94% interval;
- the mgcv part: R's estimates (Table S2) equal up to ``MGCV_RTOL`` (a deterministic fit;
  only the BLAS's summation order may differ).

A reshaping of the code that leaves every computation as it was (the same seeds, the same
model graphs) must do more: give the same numbers, bit for bit. ``exact_differences``
lists every value of the two summaries that differs, leaving out what differs between two
runs of the same code (``RUN_FIELDS``: times, fingerprints, reuse, the report's outcome).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.stats import norm

Z_MAX = 4.0
MGCV_RTOL = 1e-6
LEVELS = {"coefficients": 0.94, "smooth": 0.95}  # analysis.results' HDI and BAND
# summary.json's fields that differ between two runs of the same code
RUN_FIELDS = frozenset({"seconds", "fingerprint", "reused", "fitted", "report", "report_error",
                        "r_version", "mgcv_version"})


def exact_differences(a: Any, b: Any, path: str = "") -> list[str]:
    """The paths (``models[3].coefficients[0].mean``) where summaries ``a`` and ``b`` hold
    different values, ``RUN_FIELDS`` left out; floats compared exactly."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = [k for k in dict.fromkeys([*a, *b]) if k not in RUN_FIELDS]
        return [d for k in keys for d in (
            exact_differences(a[k], b[k], f"{path}.{k}" if path else k)
            if k in a and k in b else [f"{path}.{k}" if path else k])]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path} (length {len(a)} != {len(b)})"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in exact_differences(x, y, f"{path}[{i}]")]
    return [] if a == b or (a != a and b != b) else [path]  # NaN equals NaN here


def _sd(lo: float, hi: float, level: float) -> float:
    return (hi - lo) / (2 * norm.ppf(1 - (1 - level) / 2))


def _means(model: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """{name: (mean, sd)} of every mean ``model`` (a summary.json model) reports."""
    out = {}
    for c in model["coefficients"]:
        out[c["name"]] = (c["mean"], _sd(c["lo"], c["hi"], LEVELS["coefficients"]))
    for i, p in enumerate(model["smooth"]):
        out[f"f(d[{i}])"] = (p["mean"], _sd(p["lo"], p["hi"], LEVELS["smooth"]))
    return out


def compare_model(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """One model's two runs: {name, means, max_abs_z, worst, elpd_diff_in_se, same}."""
    ma, mb = _means(a), _means(b)
    ess_a, ess_b = a["min_ess"], b["min_ess"]
    worst, zmax = None, 0.0
    for name in ma.keys() & mb.keys():
        (mean_a, sd_a), (mean_b, sd_b) = ma[name], mb[name]
        mcse = math.sqrt(sd_a ** 2 / ess_a + sd_b ** 2 / ess_b)
        z = abs(mean_a - mean_b) / mcse if mcse > 0 else (0.0 if mean_a == mean_b else math.inf)
        if z >= zmax:
            worst, zmax = name, z
    elpd = None
    if a.get("loo") and b.get("loo"):
        se = max(a["loo"]["se"], b["loo"]["se"])
        elpd = abs(a["loo"]["elpd_loo"] - b["loo"]["elpd_loo"]) / se
    same = zmax <= Z_MAX and len(ma) == len(mb) == len(ma.keys() & mb.keys())
    return {"name": a["name"], "means": len(ma.keys() & mb.keys()), "max_abs_z": zmax,
            "worst": worst, "elpd_diff_in_se": elpd, "same": same}


def compare_recovery(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool | None:
    """The same recovered shapes and covered effects (None: not a simulated study)."""
    if a is None and b is None:
        return None
    if a is None or b is None:
        return False

    def verdicts(t: dict[str, Any]) -> list[Any]:
        return [(o["outcome"], o["recovered"], [(e["term"], e["covered"]) for e in o["effects"]])
                for o in t["outcomes"]]

    return verdicts(a) == verdicts(b)


def compare_mgcv(a: dict[str, Any] | None, b: dict[str, Any] | None) -> float | None:
    """The largest relative difference of R's Table S2 numbers (None: not fitted in both)."""
    if not a or not b or a.get("status") != "fitted" or b.get("status") != "fitted":
        return None
    worst = 0.0
    for ra, rb in zip(a["table_s2"], b["table_s2"], strict=True):
        for key, va in ra.items():
            vb = rb[key]
            if isinstance(va, float) and isinstance(vb, float) and np.isfinite(va):
                worst = max(worst, abs(va - vb) / max(abs(va), abs(vb), 1e-12))
    return worst


def compare_summaries(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Two summary.json documents of one study: {models [compare_model's], missing (models
    in one run only), recovery_same, mgcv_max_rel_diff, same}."""
    by_a = {m["name"]: m for m in a["models"]}
    by_b = {m["name"]: m for m in b["models"]}
    models = [compare_model(by_a[n], by_b[n]) for n in by_a if n in by_b]
    missing = sorted(by_a.keys() ^ by_b.keys())
    recovery = compare_recovery(a.get("truth_vs_recovered"), b.get("truth_vs_recovered"))
    mgcv = compare_mgcv(a.get("mgcv"), b.get("mgcv"))
    same = (all(m["same"] for m in models) and not missing and recovery is not False
            and (mgcv is None or mgcv <= MGCV_RTOL))
    return {"models": models, "missing": missing, "recovery_same": recovery,
            "mgcv_max_rel_diff": mgcv, "same": same}
