"""The catalogue of analysis model families: ``FAMILIES``, name -> ``ModelFamily``.

Every module of this package but ``base`` defines one family as its module-level ``FAMILY``
(analysis.families.base says what a family owns); the catalogue imports them all, so a new
family is one new module here. The names are the keys of stored summaries (a model's
``likelihood``), the fingerprints and ``analyze --family``. Callers outside this package ask
a family's attributes, never compare its name.

>>> from analysis import FAMILIES
>>> list(FAMILIES)[0], {"gamm", "gaussian"} <= set(FAMILIES), FAMILIES["gamm"].matches_mgcv
('ordinal', True, True)
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator, Mapping
from typing import Any

from analysis.families.base import Coefficient, Fitted, ModelFamily, ReportSection
from analysis.model_data import ModelData


class UnknownFamilyError(KeyError):
    """A family name that is not in the catalogue; the message lists the known ones.

    >>> from analysis import FAMILIES
    >>> try:
    ...     FAMILIES["probit"]
    ... except KeyError as e:
    ...     print(str(e).split(";")[0], "gamm, gaussian" in str(e))
    unknown model family 'probit' True
    """

    def __str__(self) -> str:
        return str(self.args[0])


class Catalogue(Mapping[str, ModelFamily]):
    """The families found in this package: the main family first, then the others by
    name (the order ``analyze`` fits them in)."""

    def __init__(self, families: list[ModelFamily]) -> None:
        mains = [f for f in families if f.main]
        if len(mains) != 1:
            raise RuntimeError(f"exactly one main model family expected, found {mains}")
        names = [f.name for f in families]
        if len(set(names)) != len(names):
            raise RuntimeError(f"two model families share a name: {sorted(names)}")
        ordered = sorted(families, key=lambda f: (not f.main, f.name))
        self._by_name = {f.name: f for f in ordered}

    def __getitem__(self, name: str) -> ModelFamily:
        try:
            return self._by_name[name]
        except KeyError:
            raise UnknownFamilyError(self.unknown(name)) from None

    def unknown(self, name: str) -> str:
        """The message for an unknown family ``name``: it and the known names."""
        return f"unknown model family {name!r}; known: {', '.join(sorted(self._by_name))}"

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    @property
    def main(self) -> ModelFamily:
        """The main family (``ModelFamily.main``)."""
        return next(f for f in self._by_name.values() if f.main)

    def defaults(self) -> list[ModelFamily]:
        """The families ``analyze`` fits unless asked otherwise, in order."""
        return [f for f in self._by_name.values() if f.default]


def _discover() -> Catalogue:
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name != "base":
            found.append(importlib.import_module(f"{__name__}.{info.name}").FAMILY)
    return Catalogue(found)


FAMILIES = _discover()


def family_of(family: str | ModelFamily) -> ModelFamily:
    """A family given by name (UnknownFamilyError for an unknown one) or as itself."""
    return family if isinstance(family, ModelFamily) else FAMILIES[family]


def model_arrays(data: ModelData, family: str | ModelFamily = FAMILIES.main.name
                 ) -> dict[str, Any]:
    """The arrays ``family``'s model of ``data`` is built from (``ModelFamily.model_arrays``)."""
    return family_of(family).model_arrays(data)


def build_model(data: ModelData, family: str | ModelFamily = FAMILIES.main.name, *,
                keep_probabilities: bool = False, shared: bool = False) -> Any:
    """``family``'s PyMC model of ``data`` (``ModelFamily.build``).

    >>> from analysis import build_model, prepare, simulate_ratings
    >>> data = prepare(simulate_ratings(participants=6, plans=4, seed=1), "acceptance",
    ...                "l1_profile")
    >>> model = build_model(data)          # a PyMC model; analysis.sample fits it
    >>> [v.name for v in model.observed_RVs], {"beta", "cut_first"} <= set(model.named_vars)
    (['y'], True)
    """
    return family_of(family).build(data, keep_probabilities=keep_probabilities, shared=shared)


__all__ = ["FAMILIES", "Catalogue", "Coefficient", "Fitted", "ModelFamily", "ReportSection",
           "UnknownFamilyError", "build_model", "family_of", "model_arrays"]
