"""What a model's trace file keeps at each ``--trace`` level (analysis.folder writes it).

The summary, the report, the LOO comparison and ``--resume`` are served by each model's
result JSON (analysis.results.ModelResult.record), never by its trace: a trace is for a
researcher who wants to look further. So the default level keeps a reduced posterior:

- ``compact`` (default), for S = chains x draws posterior draws:
    * every group is thinned to at most ``COMPACT_DRAWS`` draws in all, evenly spaced
      within each chain (step ``ceil(draws / (COMPACT_DRAWS // chains))``); chains are
      kept apart, so R-hat and ESS can still be computed, on fewer draws;
    * the posterior keeps every parameter except the GAMM's per-participant basis
      coefficients ``w_s`` (participants x (k - 1) values per draw: most of a GAMM's trace),
      and adds the smooth's curve draws ``f_curve`` (draw x ``d``): f on the summary's grid of
      distances, f = B(d) beta_f with beta_f = (0, cumsum(delta_f)) (analysis.models.
      smooth_draws), the draws behind the summary's mean and 95% band;
    * the pointwise log-likelihood (ordinal models; PSIS-LOO on the kept draws), sample
      stats and observed data; parameters and log-likelihood as float32, zlib-compressed.
- ``full``: everything as sampled (every draw, float64, ``w_s``, the per-rating category
  probabilities ``y_probs`` and the posterior predictive draws of the main models).

Measured on a simulated 362 x 5 study with the eight default models (4 chains x 1,500
draws): docs/analysis-traces.md.
"""

from __future__ import annotations

import math
from typing import Any

import arviz as az
import numpy as np
import xarray as xr

from analysis.models import ModelData, smooth_draws

COMPACT_DRAWS = 1000
# Per-participant basis coefficients of the GAMM's random smooths: dropped from compact.
PER_PARTICIPANT_BASIS = ("w_s",)
_GROUPS = ("posterior", "log_likelihood", "sample_stats", "observed_data")


def thin_step(chains: int, draws: int, keep: int | None = None) -> int:
    """The step that keeps at most ``keep`` draws of ``chains`` x ``draws`` in all: every
    chain keeps at most ``keep // chains`` of its draws."""
    keep = COMPACT_DRAWS if keep is None else keep
    return max(1, math.ceil(draws / max(1, keep // chains)))


def curve_draws(data: ModelData, delta_f: xr.DataArray, grid: np.ndarray) -> xr.DataArray:
    """f on ``grid`` for each (chain, draw) of the random-walk increments ``delta_f``."""
    chains, draws = delta_f.sizes["chain"], delta_f.sizes["draw"]
    delta = np.asarray(delta_f.transpose("chain", "draw", ...).values, dtype=float)
    f = smooth_draws(data, delta.reshape(chains * draws, -1), grid)
    return xr.DataArray(f.reshape(chains, draws, len(grid)), dims=("chain", "draw", "d"),
                        coords={"chain": delta_f["chain"], "draw": delta_f["draw"],
                                "d": np.asarray(grid, dtype=float)}, name="f_curve")


def compact(idata: az.InferenceData, data: ModelData | None = None,
            grid: Any = None) -> az.InferenceData:
    """The ``compact`` level of the module docstring; ``f_curve`` is added when ``data``
    and ``grid`` (the summary's distances) are given. ``y_probs`` (a full fit saved
    compactly) is dropped."""
    post = idata["posterior"]
    step = thin_step(post.sizes["chain"], post.sizes["draw"])
    groups: dict[str, Any] = {}
    for name in _GROUPS:
        if name not in idata.groups():
            continue
        ds = idata[name]
        if "draw" in ds.dims:
            ds = ds.isel(draw=slice(None, None, step))
        if name == "posterior":
            ds = ds.drop_vars(["y_probs", *PER_PARTICIPANT_BASIS], errors="ignore")
            if data is not None and grid is not None and "delta_f" in ds:
                ds = ds.assign(f_curve=curve_draws(data, ds["delta_f"], np.asarray(grid)))
        if name in ("posterior", "log_likelihood"):
            ds = ds.astype("float32")
        groups[name] = ds
    return az.InferenceData(**groups)
