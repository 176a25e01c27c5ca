"""R's mgcv and ordinal as a second analysis engine: ``Rscript`` with files in, JSON out.

The reference study (Tominaga et al., "Reassessing Evaluation Functions in Algorithmic
Recourse", section 4.1 and Table S2) fitted its GAMMs with mgcv. We call mgcv rather than
reimplement it: ``fit_gamms`` writes the ratings (CSV) and a job (JSON) to a temporary
folder, runs ``gamm.R`` (shipped beside this module) with ``Rscript``, and reads its JSON
answer. For rating y of participant u at distance x (the paper's Eq. 4 as mgcv fits it):

    y_iu = beta_0 + b_0u + s(x_iu) + b_1u x_iu + e_iu,
    b_0u ~ N(0, sigma_0^2),  b_1u ~ N(0, sigma_1^2),  e_iu ~ N(0, sigma^2)

    mgcv:  y ~ s(x, k = 10) + s(uid, bs = "re") + s(uid, x, bs = "re")

s is mgcv's default thin-plate regression spline (k = 10 basis functions, fewer when the
distance takes fewer distinct values), centred over the data (sum_i s(x_i) = 0); the two
``re`` terms are Table S2's "uid (r.i.)" and "uid (r.s.)": random effects as penalized
terms, so each has an EDF and a Wood (2013) F test of being zero. Smoothing parameters rho
(penalty sum_j exp(rho_j) S_j) by ``method``; the paper names none. REML by default: mgcv's
fast REML (``bam(method = "fREML")``) finds the restricted likelihood's optimum in seconds,
then ``gam`` fits at it, so the numbers are gam's own REML fit's. GCV.Cp (gam's default,
n ||y - A y||^2 / (n - tr A)^2) is the named alternative: on data with the reference study's
spread its score is flat and gam searches for minutes (docs/analysis-mgcv.md). Per model the
result holds Table S2's row values (intercept estimate, SE, t, p; EDF, F and p of the smooth
and of both participant terms; AIC) and Figure 3's curve: the centred smooth on a grid with
its 95% pointwise interval (fit +- 1.96 SE from ``predict.gam(type = "terms")``).

``fit_clmm``: ordinal::clmm, the frequentist twin of analysis.models' ordinal model (same
cumulative-logit likelihood and sign convention, P(y <= k) = logistic(c_k - eta)), on the
same design columns; used to cross-check that model's coefficients.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

SCRIPT = Path(__file__).with_name("gamm.R")
RSCRIPT = "Rscript"
PACKAGES = ("mgcv", "ordinal", "jsonlite")
METHODS: tuple[str, ...] = ("REML", "GCV.Cp", "ML")
DEFAULT_METHOD = "REML"  # the paper names none (module docstring)
DEFAULT_K = 10  # mgcv's default basis size for s(x)
BLAS_THREADS = 1  # R's OpenBLAS threads for a GAMM (fit_gamms)
# R's CPU priority (nice), below the sampler's: analyze fits the GAMMs while the Bayesian
# models sample, and at the same priority R takes its share of the cores from them although
# they, not R, are what the analysis waits for. At 10 it gets what they leave and finishes
# about when they do; at 19 it is left with most of its work for the end, alone on one core
# (docs/benchmarks.md). Alone on a machine R runs as fast at any priority.
NICENESS = 10
TIMEOUT = 1800.0  # seconds for one Rscript run: many times what a reference-size study takes


class MgcvUnavailable(RuntimeError):
    """Rscript or one of the R packages is not installed (``make install`` installs them).

    >>> import os
    >>> from unittest import mock
    >>> from analysis import GammSpec, MgcvUnavailable, fit_gamms, simulate_ratings
    >>> ratings = simulate_ratings(participants=6, plans=4, seed=1)
    >>> with mock.patch.dict(os.environ, {"PATH": ""}):      # no Rscript on PATH
    ...     try:
    ...         fit_gamms(ratings, [GammSpec("acceptance", "l1_profile")])
    ...     except MgcvUnavailable:
    ...         print("R is not installed here")
    R is not installed here
    """


class MgcvError(RuntimeError):
    """R ran and failed (the message is R's last error line)."""


@dataclass(frozen=True)
class GammSpec:
    """One GAMM: a rating (acceptance or action) on a smooth of one distance column.

    >>> from analysis import GammSpec
    >>> spec = GammSpec("action", "l1_profile")   # action rating ~ s(l1_profile) + ...
    >>> spec.outcome, spec.distance
    ('action', 'l1_profile')
    """

    outcome: str
    distance: str

    @property
    def name(self) -> str:
        return f"{self.outcome}_{self.distance}_mgcv"


def r_status() -> dict[str, Any]:
    """{available, reason (null or why not), rscript (path or null)}: is Rscript on PATH
    with mgcv, ordinal and jsonlite loadable?

    >>> import os
    >>> from unittest import mock
    >>> from analysis import r_status
    >>> with mock.patch.dict(os.environ, {"PATH": ""}):      # no Rscript on PATH
    ...     status = r_status()
    >>> status["available"], status["rscript"]
    (False, None)

    ``r_status`` says whether R and both packages are there; every failure raises
    ``MgcvUnavailable`` (nothing to run) or ``MgcvError`` (R ran and failed), each with a
    one-line reason.
    """
    path = shutil.which(RSCRIPT)
    if path is None:
        return {"available": False, "rscript": None,
                "reason": "Rscript is not installed (make install installs R, mgcv and "
                          "ordinal from Debian)"}
    probe = ("for (p in c(" + ", ".join(f"'{p}'" for p in PACKAGES) + ")) "
             "if (!requireNamespace(p, quietly = TRUE)) { cat(p); quit(status = 3) }")
    try:
        r = subprocess.run([path, "--vanilla", "-e", probe], capture_output=True, text=True,
                           timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"available": False, "rscript": path, "reason": f"Rscript does not run: {e}"}
    if r.returncode == 3:
        return {"available": False, "rscript": path,
                "reason": f"the R package {r.stdout.strip()} is not installed (make install)"}
    if r.returncode != 0:
        return {"available": False, "rscript": path,
                "reason": f"Rscript does not run: {_last_line(r.stderr)}"}
    return {"available": True, "rscript": path, "reason": None}


def too_few_ratings(ratings: pd.DataFrame, specs: Sequence[GammSpec], *,
                    k: int = DEFAULT_K) -> str | None:
    """Why mgcv cannot fit a GAMM of ``specs`` on ``ratings`` (more coefficients than
    ratings, module docstring), or None when every one has enough ratings.

    >>> import pandas as pd
    >>> from analysis import GammSpec, too_few_ratings
    >>> one_each = pd.DataFrame({"participant_id": list("abcdef"), "action": [1, 2, 3, 4, 5, 6],
    ...                          "l1_profile": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]})
    >>> print(too_few_ratings(one_each, [GammSpec("action", "l1_profile")]))  # 6 + 2 x 6 > 6
    action on l1_profile: 6 ratings of 6 participants, but mgcv's GAMM (a random intercept and
    slope per participant) has 18 coefficients: too few ratings per participant to fit it
    >>> many = pd.concat([one_each.assign(l1_profile=one_each["l1_profile"] + i / 10)
    ...                   for i in range(5)])                     # 5 ratings each
    >>> too_few_ratings(many, [GammSpec("action", "l1_profile")]) is None   # 10 + 12 <= 30
    True
    """
    frame = _frame(ratings, sorted({s.outcome for s in specs} | {s.distance for s in specs}))
    for spec in specs:
        rows = frame[np.isfinite(frame[spec.outcome]) & np.isfinite(frame[spec.distance])]
        people = rows["uid"].nunique()
        coefficients = min(k, rows[spec.distance].nunique()) + 2 * people
        if coefficients > len(rows):
            return (f"{spec.outcome} on {spec.distance}: {len(rows)} ratings of {people} "
                    f"participants, but mgcv's GAMM (a random intercept and slope per "
                    f"participant) has {coefficients} coefficients: too few ratings per "
                    "participant to fit it")
    return None


def fit_gamms(ratings: pd.DataFrame, specs: Sequence[GammSpec], *,
              method: str = DEFAULT_METHOD, k: int = DEFAULT_K,
              grids: dict[str, np.ndarray] | None = None, grid_size: int = 60,
              timeout: float = TIMEOUT, blas_threads: int | None = BLAS_THREADS
              ) -> dict[str, Any]:
    """mgcv's GAMM of the module docstring for each spec, on ``ratings`` (a
    ``ratings_long`` frame: participant_id, the outcomes and distances). The curve of a
    distance is evaluated on ``grids[distance]`` (default: ``grid_size`` points from its
    minimum to its maximum, as analysis.results' smooths). Returns {r_version,
    mgcv_version, method, models: [one dict per spec, in order: name, outcome, distance,
    n, participants, k, intercept {estimate, se, t, p}, smooth / participant_intercept /
    participant_slope {edf, ref_df, F, p}, aic, deviance_explained, r_squared, scale,
    converged, search (how the smoothing parameters were found), smoothing_parameters,
    curve {d, fit, se, lo, hi}, seconds]}. ``blas_threads``: R's OpenBLAS
    threads, None for OpenBLAS's own (one per core). One by default: a 362-participant GAMM's
    algebra (733 coefficients) gains nothing from a second thread, and a multithreaded BLAS
    sharing its cores with other work spends most of its time waiting (docs/benchmarks.md).

    The GAMM has k + 2P coefficients for P participants (the intercept, k - 1 spline columns,
    a random intercept and a random slope each); mgcv refuses a model with more coefficients than
    ratings, which a study of one or two ratings per participant is (``too_few_ratings`` says
    so before R is run).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if not specs:
        raise ValueError("no GAMM to fit")
    columns = sorted({s.outcome for s in specs} | {s.distance for s in specs})
    frame = _frame(ratings, columns)
    grids = dict(grids or {})
    out: dict[str, Any] = {"method": method, "models": []}
    # one job per distance: each has its own grid (R fits the models one after another; two
    # R processes side by side would take more of the machine from the sampler beside them)
    for distance in dict.fromkeys(s.distance for s in specs):
        d = frame[distance].to_numpy(dtype=float)
        d = d[np.isfinite(d)]
        grid = grids.get(distance)
        if grid is None:
            grid = np.linspace(d.min(), d.max(), grid_size) if d.size else np.zeros(0)
        job = {"kind": "gamm", "method": method, "k": int(k),
               "grid": [float(v) for v in grid],
               "models": [{"name": s.name, "outcome": s.outcome, "distance": s.distance}
                          for s in specs if s.distance == distance]}
        answer = run_r(job, frame, timeout=timeout, blas_threads=blas_threads)
        out["r_version"], out["mgcv_version"] = answer["r_version"], answer["mgcv_version"]
        out["models"] += answer["models"]
    order = {s.name: i for i, s in enumerate(specs)}
    if sorted(m["name"] for m in out["models"]) != sorted(order):
        raise MgcvError("R's answer does not hold one fit per GAMM asked for")
    out["models"].sort(key=lambda m: order[m["name"]])
    return out


def fit_clmm(y: np.ndarray, participant: np.ndarray, columns: dict[str, np.ndarray], *,
             slope: np.ndarray | None = None, timeout: float = TIMEOUT) -> dict[str, Any]:
    """ordinal::clmm of ratings ``y`` (1..7) on the fixed-effect ``columns`` (name ->
    values) with a random intercept per ``participant`` and, given ``slope``, a random
    slope on it (correlated with the intercept): {coefficients [{name, estimate, se}],
    thresholds, logLik, n, participants, random, seconds, r_version, ordinal_version}."""
    frame = pd.DataFrame({"uid": np.asarray(participant).astype(str),
                          "y": np.asarray(y, dtype=int)})
    names = []
    for i, (name, values) in enumerate(columns.items()):
        safe = f"c{i}"  # R-safe names; mapped back below
        frame[safe] = np.asarray(values, dtype=float)
        names.append((safe, name))
    if slope is not None:
        frame["slope"] = np.asarray(slope, dtype=float)
    job = {"kind": "clmm", "outcome": "y", "columns": [s for s, _ in names],
           "slope": "slope" if slope is not None else None}
    answer = run_r(job, frame, timeout=timeout)
    back = dict(names)
    for c in answer["coefficients"]:
        c["name"] = back[c["name"]]
    return answer


def run_r(job: dict[str, Any], frame: pd.DataFrame, *, timeout: float = TIMEOUT,
          blas_threads: int | None = None) -> dict[str, Any]:
    """Run gamm.R on ``job`` and ``frame`` (a ``uid`` column and the job's columns) in a
    temporary folder; its JSON answer (``blas_threads``: ``fit_gamms``')."""
    if shutil.which(RSCRIPT) is None:
        raise MgcvUnavailable(r_status()["reason"])
    with tempfile.TemporaryDirectory(prefix="recourse-mgcv-") as tmp:
        folder = Path(tmp)
        (folder / "job.json").write_text(json.dumps(job), encoding="utf-8")
        frame.to_csv(folder / "data.csv", index=False)
        out = folder / "out.json"
        try:
            r = subprocess.run(
                r_command(["--vanilla", str(SCRIPT), str(folder / "job.json"),
                           str(folder / "data.csv"), str(out)]),
                capture_output=True, text=True, timeout=timeout, env=_r_environment(blas_threads))
        except subprocess.TimeoutExpired:
            raise MgcvError(f"Rscript did not finish within {timeout:.0f} s") from None
        if r.returncode != 0:
            missing = [p for p in PACKAGES if f"there is no package called \u2018{p}\u2019"
                       in r.stderr or f"there is no package called '{p}'" in r.stderr]
            if missing:
                raise MgcvUnavailable(f"the R package {missing[0]} is not installed "
                                      "(make install)")
            raise MgcvError(f"R failed (exit {r.returncode}): {_last_line(r.stderr)}")
        try:
            return json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise MgcvError(f"R wrote no readable answer: {e}") from None


def r_command(args: list[str]) -> list[str]:
    """Rscript with ``args``, at CPU priority ``NICENESS`` (through ``nice``) and ended with
    the process that started it (through ``setpriv --pdeathsig``: the kernel sends R SIGTERM
    when its parent dies, so a killed analysis leaves no R fitting on for minutes), each
    where the system has the tool. Both are commands rather than a Python hook because a
    hook runs between fork and exec, which is unsafe while the sampler's threads run."""
    nice, setpriv = shutil.which("nice"), shutil.which("setpriv")
    return (([setpriv, "--pdeathsig", "TERM"] if setpriv else [])
            + ([nice, "-n", str(NICENESS)] if nice else []) + [RSCRIPT, *args])


def _r_environment(blas_threads: int | None) -> dict[str, str] | None:
    """Rscript's environment: ours, with OpenBLAS's thread count when one is given."""
    if blas_threads is None:
        return None
    return {**os.environ, "OPENBLAS_NUM_THREADS": str(blas_threads)}


def _frame(ratings: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """uid and ``columns`` of ``ratings`` (numbers; missing values stay missing)."""
    missing = [c for c in ["participant_id", *columns] if c not in ratings]
    if missing:
        raise ValueError(f"ratings lack the columns {missing}")
    frame = pd.DataFrame({"uid": ratings["participant_id"].astype(str).to_numpy()})
    for c in columns:
        frame[c] = pd.to_numeric(ratings[c], errors="coerce").to_numpy(dtype=float)
    return frame


def _last_line(text: str) -> str:
    """R's error message: the last non-empty lines of stderr from 'Error' on, as one line."""
    lines = [line.strip() for line in text.strip().splitlines()
             if line.strip() and line.strip() != "Execution halted"]
    start = max((i for i, line in enumerate(lines) if line.startswith("Error")), default=None)
    picked = lines[start:] if start is not None else lines[-1:]
    return " ".join(" ".join(picked).split())[:500] or "no message"
