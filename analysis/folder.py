"""The analysis output folder: each model's result written as soon as it finishes.

Layout of ``OUT``::

    models/<outcome>_<distance>_<likelihood>.json   one model's result (ModelResult.record)
                                                    with its fingerprint and trace level
    traces/<outcome>_<distance>_<likelihood>.nc     its trace (NetCDF), unless --trace none
    summary.json                                    rewritten after every model
    report.html                                     written at the end

A model's trace is written first and its JSON last, atomically (temporary file, then
rename): a JSON on disk always describes a finished model whose trace is complete, and a
process killed at any moment leaves every finished model usable.

**Fingerprint** (SHA-256): the model's input arrays (ratings, distances, participant and arm
codes, satisfaction / violation terms, and every array the family's model is built from)
and labels, the model (outcome, distance, family,
spline basis, whether it computes the log-likelihood and the PPC, and the source of the
modules that build, sample and summarize it) and the sampler (backend, draws, tune, chains,
seed, target_accept, and the versions of PyMC, PyTensor, ArviZ and nutpie). ``reusable``
returns a stored result only when its fingerprint equals the new one and its trace level
is at least the one asked for.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
from pathlib import Path
from typing import Any

import arviz as az
import numpy as np

from analysis.families import ModelFamily
from analysis.model_data import ModelData
from analysis.results import ModelResult, ModelSpec
from analysis.traces import compact
from data.jsonio import write_json

TRACE_LEVELS: tuple[str, ...] = ("none", "compact", "full")
DEFAULT_TRACE = "compact"
# Modules whose code decides a model's result: a change in any of them refits.
_CODE = ("model_data.py", "ordinal.py", "predictor.py", "splines.py", "fit.py", "results.py")
_VERSIONED = ("pymc", "pytensor", "arviz", "nutpie")


def fingerprint(spec: ModelSpec, data: ModelData, sampler: dict[str, Any]) -> str:
    """The SHA-256 of the module docstring's ingredients, as hex."""
    h = hashlib.sha256()
    arrays = [data.y, data.d, data.participant, data.arm,
              *(data.terms[t] for t in sorted(data.terms))]
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype}{a.shape}".encode())
        h.update(a.tobytes())
    family = spec.family
    for name, a in sorted(family.model_arrays(data).items()):  # the family's own arrays too
        a = np.ascontiguousarray(a)
        h.update(f"{name}{a.dtype}{a.shape}".encode())
        h.update(a.tobytes())
    meta = {
        "spec": [spec.outcome, spec.distance, spec.likelihood, spec.ppc, spec.log_likelihood],
        "participants": data.participants, "arms": data.arms, "terms": sorted(data.terms),
        "basis": None if data.basis is None else [data.basis.lo, data.basis.hi, data.basis.k],
        "sampler": sampler, "versions": versions(),
        "code": code_hashes((*_CODE, *family_modules(family))),
    }
    h.update(json.dumps(meta, sort_keys=True, default=str).encode())
    return h.hexdigest()


class AnalysisFolder:
    """Reads and writes the layout of the module docstring under ``root``.

    **Trace levels** (``TRACE_LEVELS``; what each keeps: analysis.traces):

    - ``none``: no trace; the result JSON alone serves the summary, the report, LOO and
      ``--resume``;
    - ``compact`` (default): a reduced posterior: at most 1,000 draws in all, the smooth's
      curve draws instead of the GAMM's per-participant basis coefficients, the pointwise
      log-likelihood, float32, compressed (a few MB per model at 362 x 5);
    - ``full``: everything as sampled in float64, with the per-rating category probabilities
      ``y_probs`` (about 400 MB per ordinal model at 362 x 5) and the posterior predictive
      draws of the main models.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.models = self.root / "models"
        self.traces = self.root / "traces"

    def trace_path(self, spec: ModelSpec) -> Path:
        return self.traces / f"{spec.name}.nc"

    def save(self, result: ModelResult, idata: az.InferenceData, fp: str, trace: str) -> None:
        """Write ``result`` (trace at level ``trace`` first, then its JSON)."""
        if trace not in TRACE_LEVELS:
            raise ValueError(f"trace must be one of {', '.join(TRACE_LEVELS)}, got {trace!r}")
        self.models.mkdir(parents=True, exist_ok=True)
        path = self.trace_path(result.spec)
        if trace != "none":
            self.traces.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".nc.partial")
            data = (compact(idata, result.data, result.smooth["d"].to_numpy())
                    if trace == "compact" else idata)
            data.to_netcdf(str(tmp), compress=True)
            os.replace(tmp, path)
        record = {"fingerprint": fp, "trace": trace,
                  "trace_file": str(path.relative_to(self.root)) if trace != "none" else None,
                  **result.record()}
        write_json(self.models / f"{result.spec.name}.json", record)

    def reusable(self, spec: ModelSpec, data: ModelData, fp: str,
                 trace: str) -> ModelResult | None:
        """The stored result of ``spec`` when its fingerprint is ``fp`` and its trace is at
        least at level ``trace`` (and still on disk); otherwise None."""
        path = self.models / f"{spec.name}.json"
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        stored = record.get("trace")
        if record.get("fingerprint") != fp or stored not in TRACE_LEVELS:
            return None
        if TRACE_LEVELS.index(stored) < TRACE_LEVELS.index(trace):
            return None
        if stored != "none" and not self.trace_path(spec).exists():
            return None
        try:
            return ModelResult.from_record(spec, data, record)
        except (KeyError, TypeError, ValueError):
            return None  # written by an older layout: refit

    def write_summary(self, doc: dict[str, Any]) -> Path:
        path = self.root / "summary.json"
        write_json(path, doc)
        return path


@functools.cache
def family_modules(family: ModelFamily) -> tuple[str, ...]:
    """The files of this package that define ``family``'s class and the classes it extends,
    and the modules of the operations its likelihood uses (``ModelFamily.kernels``)."""
    own = [cls.__module__.removeprefix("analysis.").replace(".", "/") + ".py"
           for cls in type(family).__mro__ if cls.__module__.startswith("analysis.families.")]
    return tuple(dict.fromkeys([*own, *family.kernels]))


def code_hashes(files: tuple[str, ...]) -> dict[str, str]:
    """SHA-256 of each of these modules of this package as this process loaded them (read
    once, so one run never mixes two versions)."""
    here = Path(__file__).parent
    return {f: hashlib.sha256((here / f).read_bytes()).hexdigest() for f in files}


def versions() -> dict[str, str | None]:
    """The versions of the libraries that decide a fit (``_VERSIONED``)."""
    return {p: _version(p) for p in _VERSIONED}


@functools.cache
def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None
