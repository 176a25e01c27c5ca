"""Compile a model once, refit it on many studies: the hot path of a power analysis.

A simulated power analysis fits one model to hundreds of studies that differ only in their
data. ``Refitter`` builds the model with its data as named containers
(``ModelFamily.build(shared=True)``, analysis.families), compiles it once per *shape* and, for each
new study, swaps the arrays in:

- ``nutpie`` (default): nutpie compiles the log-density and its gradient with numba once
  (``compile_pymc_model``: longer than the sampling itself, unless analysis.nutpie_cache
  finds a model of the same graph compiled before, in any process) and
  ``CompiledPyMCModel.with_data`` points the compiled function at the next study's arrays,
  so a refit costs the sampling alone;
- ``pymc``: PyMC's own NUTS on the same model, the data swapped with ``pm.set_data``
  (PyTensor's on-disk cache keeps its rebuilds short); the reference backend.

The shape of a model is what sizes its parameters: the family, the number of participants
(one random intercept and slope each), of arms, of spline basis functions and the terms
present; the number of ratings may differ within a shape.

Studies rarely keep the same number of participants (some are screened out or excluded),
and every distinct count would be a compilation of its own. ``fit(..., pad_participants=N)``
therefore pads the participant list to N with participants who have no ratings: their
non-centred effects z_u, z_b ~ N(0, 1) appear in no likelihood term, so the posterior of
every other parameter is exactly the unpadded one. A power curve pads to its N; ``analyze``
to the next multiple of ``PARTICIPANT_STEP`` (``padded_count``), so a study analysed again
after a few exclusions, or another of about its size, finds its model compiled (here or on
disk: analysis.nutpie_cache). The trace a fit returns holds the study's own participants
only (``unpadded``): the padding never reaches diagnostics, traces or reports.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import arviz as az
import pymc as pm

from analysis import fit as fitting
from analysis.families import FAMILIES, ModelFamily
from analysis.model_data import ModelData
from analysis.nutpie_cache import compile_model

Shape = tuple[str, int, int, int, tuple[str, ...], tuple[tuple[str, int], ...]]
# analyze's padding step (module docstring): a study of N participants is compiled for N
# rounded up to a multiple of this, at the cost of at most this many prior-only participants.
PARTICIPANT_STEP = 25


def shape_of(data: ModelData, family: str) -> Shape:
    """(family, participants, arms, basis functions, terms, the size of every dimension of
    the family's model) of the module docstring."""
    assert data.basis is not None
    dims = tuple(sorted((name, len(v)) for name, v in FAMILIES[family].coords(data).items()))
    return (family, len(data.participants), len(data.arms), data.basis.k,
            tuple(data.terms), dims)


def padded(data: ModelData, participants: int) -> ModelData:
    """``data`` with participants without ratings added up to ``participants`` (the module
    docstring); the ratings and their participant indices are unchanged."""
    missing = participants - len(data.participants)
    if missing <= 0:
        return data
    return replace(data, participants=[*data.participants,
                                       *(f"(padding {i + 1})" for i in range(missing))])


def padded_count(participants: int, step: int = PARTICIPANT_STEP) -> int:
    """``participants`` rounded up to a multiple of ``step`` (the module docstring)."""
    return -(-participants // step) * step


def unpadded(idata: az.InferenceData, participants: int) -> az.InferenceData:
    """``idata`` without the padding participants (``padded``'s, after the first
    ``participants``) in any group that has a participant dimension."""
    return idata.isel(participant=slice(0, participants))


@dataclass
class Refit:
    """One refit: its trace and diagnostics, the sampling time (compilation excluded), the
    compilation time this fit paid (0 when it reused a compiled model) and the PyMC model
    holding this fit's data (for its log-likelihood and posterior predictive draws)."""

    idata: az.InferenceData
    diagnostics: fitting.Diagnostics
    seconds: float
    compile_seconds: float
    backend: str
    model: pm.Model


@dataclass
class PendingRefit:
    """A refit whose chains were started (``Refitter.start``): ``result()`` waits for them,
    computes the diagnostics (drawing again toward an ESS target when one is set) and returns
    the Refit."""

    finish: Callable[[], Refit]
    cancel: Callable[[], None]  # stops the started chains; nothing when none runs

    def result(self) -> Refit:
        """The Refit, once its chains are done."""
        return self.finish()


@dataclass
class _Compiled:
    model: pm.Model
    names: list[str]
    nutpie: Any = None  # nutpie's CompiledPyMCModel (backend nutpie)


@dataclass
class Refitter:
    """Fits models of the family named ``family`` (analysis.families.FAMILIES; default the
    main family) with one sampler setting, compiling once per shape (``keep_probabilities``:
    ``ModelFamily.build``'s)."""

    family: str = FAMILIES.main.name
    backend: str = "nutpie"
    draws: int | None = None
    tune: int | None = None
    chains: int = 4
    cores: int = 1
    target_accept: float | None = None
    keep_probabilities: bool = False
    ess_target: int | None = None  # analysis.fit.sample_to_target's (default: fit.resolve)
    compiles: int = 0
    model_family: ModelFamily = field(init=False, repr=False)
    _cache: dict[Shape, _Compiled] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.model_family = FAMILIES[self.family]
        resolved = fitting.resolve(self.backend, self.draws, self.tune, self.target_accept,
                                   self.ess_target)
        self.draws, self.tune = resolved["draws"], resolved["tune"]
        self.target_accept, self.ess_target = resolved["target_accept"], resolved["ess_target"]

    @property
    def settings(self) -> dict[str, Any]:
        """The sampler settings (each default resolved)."""
        out = {"backend": self.backend, "draws": self.draws, "tune": self.tune,
               "chains": self.chains, "target_accept": self.target_accept}
        return out if self.ess_target is None else {**out, "ess_target": self.ess_target}

    def fit(self, data: ModelData, seed: int = 0, pad_participants: int | None = None) -> Refit:
        """Sample the posterior of the model of ``data`` (compiling only for a new shape;
        ``pad_participants``: the module docstring's padding)."""
        return self.start(data, seed, pad_participants).result()

    def start(self, data: ModelData, seed: int = 0,
              pad_participants: int | None = None) -> PendingRefit:
        """``fit`` in two halves: compile if needed and start the chains (nutpie: in its own
        threads, so the caller can work while they run; pymc: they run in ``result()``);
        the returned ``PendingRefit.result()`` waits, diagnoses and returns the Refit."""
        own = len(data.participants)
        if pad_participants is not None:
            data = padded(data, pad_participants)
        key = shape_of(data, self.family)
        compile_seconds = 0.0
        if key not in self._cache:
            start = time.perf_counter()
            self._cache[key] = self._compile(data)
            compile_seconds = time.perf_counter() - start
            self.compiles += 1
        compiled = self._cache[key]
        arrays = self.model_family.model_arrays(data)
        settings = {"tune": self.tune, "cores": self.cores, "target_accept": self.target_accept}
        assert self.draws is not None  # resolved in __post_init__
        start = time.perf_counter()
        pm.set_data(arrays, model=compiled.model)
        with_data = compiled.nutpie.with_data(**arrays) if self.backend == "nutpie" else None
        low_rank = self.model_family.low_rank_mass
        running = ([fitting.start_nutpie(with_data, chains=self.chains, draws=self.draws,
                                         seed=seed, low_rank=low_rank, **settings)]
                   if with_data is not None else [])
        # wall seconds of every try toward an ESS target; a started try's from its start
        sampling = [0.0 if running else time.perf_counter() - start]

        again = fitting.drawer(compiled.model, with_data, seed=seed, low_rank=low_rank,
                               **settings)

        def draw(k: int, n: int, attempt: int) -> az.InferenceData:
            began = start if running else time.perf_counter()
            try:
                # the first try was started above; later ones draw here
                idata = fitting.wait_nutpie(running.pop()) if running else again(k, n, attempt)
                return idata if own == len(data.participants) else unpadded(idata, own)
            finally:
                sampling[0] += time.perf_counter() - began

        def finish() -> Refit:
            idata, diagnostics = fitting.sample_to_target(draw, compiled.names, self.chains,
                                                          self.draws, self.ess_target)
            return Refit(idata, diagnostics, sampling[0], compile_seconds, self.backend,
                         compiled.model)

        def cancel() -> None:
            if running:
                fitting.cancel_nutpie(running.pop())

        return PendingRefit(finish, cancel)

    def _compile(self, data: ModelData) -> _Compiled:
        model = self.model_family.build(data, shared=True,
                                        keep_probabilities=self.keep_probabilities)
        out = _Compiled(model, fitting.free_names(model))
        if self.backend == "nutpie":
            out.nutpie = compile_model(model)
        return out
