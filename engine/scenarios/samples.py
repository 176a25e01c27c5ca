"""Where a scenario's data come from, and how its labels are made.

Every trained artifact and every benchmark population comes from a scenario's splits, per
*role*:

- ``decision``: the decision model (ADS) trains on ``train``, selects on ``validation`` and is
  scored on ``test``;
- ``flow``: the causal normalizing flow trains on ``train`` and stops on ``validation``;
- ``recourse``: the amortized recourse models train on the ``train`` rejections, select on the
  ``validation`` rejections, and the deployment population is the ``test`` rejections. Feature
  ranges and bounds (cost normalization, the Oracle's grid, feasibility) are this role's
  training min and max, as in CARMA's reference code.

Three sources:

- ``SCMSamples``: ``n`` profiles drawn from the scenario's SCM at ``seed`` and split by
  ``split``; every role shares the same splits. Labels follow the scenario's label rule.
- ``PublishedSamples``: the files of a published experiment, ``<folder>/<dir>/<i>_<n>_X.pt``
  and ``..._Y.pt`` (i = 0, 1, 2 for train / validation / test), one directory per role
  (CARMA's Loan samples: ``clf``, ``causal_estimator``, ``recourse``). Their labels are the
  files' own.
- ``TableSamples``: the rows of a table a scenario file names (a data world's CSV, a pool
  world's pool), shuffled once with ``seed`` and split by ``split``; every role shares the
  splits. Labels are the table's (a data world's label column, a pool world's rule).

Label rules (``LABEL_RULES``): with l(x) the SCM's label logit (P(Y = 1 | x) = sigmoid(l)),
``threshold`` sets Y = 1[l(x) >= 0] (deterministic; what the published CARMA samples follow,
so the Bayes-optimal accuracy is 1), ``bernoulli`` draws Y ~ Bernoulli(sigmoid(l(x))).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import torch
from torch import Tensor

if TYPE_CHECKING:
    from engine.scm import StructuralCausalModel

Role = Literal["decision", "flow", "recourse"]
ROLES: tuple[str, ...] = ("decision", "flow", "recourse")
SPLITS: tuple[str, ...] = ("train", "validation", "test")
LABEL_RULES: tuple[str, ...] = ("threshold", "bernoulli")
# role -> split -> (x (n, d) float64, y (n,) float64)
Splits = dict[str, tuple[Tensor, Tensor]]
DATA_DIR = Path(__file__).parent / "data"


def make_labels(scm: StructuralCausalModel, x: Tensor, rule: str, seed: int) -> Tensor:
    """Labels of x under ``rule`` (module docstring), float64 0/1."""
    if rule == "threshold":
        return (scm.label_logit(x) >= 0).to(torch.float64)
    if rule == "bernoulli":
        g = torch.Generator().manual_seed(seed)
        return torch.bernoulli(scm.label_proba(x).to(torch.float64), generator=g)
    raise ValueError(f"unknown label rule {rule!r}; expected one of {', '.join(LABEL_RULES)}")


@dataclass(frozen=True)
class SCMSamples:
    """``n`` draws from the SCM at ``seed``, split train / validation / test by ``split``."""

    n: int = 20_000
    split: tuple[float, float, float] = (0.5, 0.25, 0.25)
    seed: int = 0
    kind: str = field(default="scm", init=False)

    def describe(self) -> str:
        return f"{self.n:,} SCM samples (seed {self.seed}), split {'/'.join(map(str, self.split))}"

    def load(self, scm: StructuralCausalModel, label_rule: str) -> dict[str, Splits]:
        x = scm.sample(self.n, seed=self.seed)
        y = make_labels(scm, x, label_rule, self.seed + 1)
        n_train = int(round(self.split[0] * self.n))
        n_val = int(round(self.split[1] * self.n))
        cuts = {
            "train": slice(0, n_train),
            "validation": slice(n_train, n_train + n_val),
            "test": slice(n_train + n_val, None),
        }
        splits = {s: (x[c], y[c]) for s, c in cuts.items()}
        return {role: splits for role in ROLES}


@dataclass(frozen=True)
class PublishedSamples:
    """A published experiment's samples (module docstring); ``dirs`` maps role -> folder."""

    folder: Path
    dirs: tuple[tuple[str, str], ...] = (
        ("decision", "clf"),
        ("flow", "causal_estimator"),
        ("recourse", "recourse"),
    )
    source: str = ""
    kind: str = field(default="published", init=False)

    def describe(self) -> str:
        return f"published samples in {self.folder}" + (f" ({self.source})" if self.source else "")

    def _file(self, role_dir: str, i: int, what: str) -> Path:
        found = sorted((self.folder / role_dir).glob(f"{i}_*_{what}.pt"))
        if len(found) != 1:
            raise FileNotFoundError(
                f"expected one file {role_dir}/{i}_<n>_{what}.pt in {self.folder}, found "
                f"{len(found)}"
            )
        return found[0]

    def load(self, scm: StructuralCausalModel, label_rule: str) -> dict[str, Splits]:
        out: dict[str, Splits] = {}
        for role, role_dir in self.dirs:
            splits: Splits = {}
            for i, split in enumerate(SPLITS):
                x = torch.load(self._file(role_dir, i, "X"), weights_only=True)
                y = torch.load(self._file(role_dir, i, "Y"), weights_only=True)
                if x.ndim != 2 or x.shape[1] != scm.d or y.shape != (x.shape[0],):
                    raise ValueError(
                        f"{role_dir}/{i}: X must be (n, {scm.d}) and Y (n,), got "
                        f"{tuple(x.shape)} and {tuple(y.shape)}"
                    )
                splits[split] = (x.to(torch.float64), y.to(torch.float64))
            out[role] = splits
        return out

    def noise(self, role: str, split: str) -> Tensor:
        """The published exogenous noise U of a role's split (float64), for checks."""
        role_dir = dict(self.dirs)[role]
        u = torch.load(self._file(role_dir, SPLITS.index(split), "U"), weights_only=True)
        return u.to(torch.float64)


CARMA_LOAN = PublishedSamples(
    DATA_DIR / "carma-loan",
    source="ayanmaj92/carma-recourse fb8ad2c, New_Data/*/loan_non-linear, MIT License",
)

@dataclass(frozen=True)
class TableSamples:
    """Rows of a table with their labels (module docstring); ``shuffle`` False keeps the
    table's order (a pool: every split is the whole pool when ``split`` is None)."""

    x: Tensor
    y: Tensor
    source: str
    split: tuple[float, float, float] | None = (0.5, 0.25, 0.25)
    seed: int = 0
    people: tuple[Tensor, Tensor] | None = None  # a pool world's applicants: (x, y)
    kind: str = field(default="table", init=False)

    def describe(self) -> str:
        how = "one split" if self.split is None else f"split {'/'.join(map(str, self.split))}"
        return f"{len(self.x):,} rows of {self.source} ({how})"

    def load(self, scm: StructuralCausalModel | None, label_rule: str) -> dict[str, Splits]:
        x, y = self.x.to(torch.float64), self.y.to(torch.float64)
        if self.split is None:
            splits = {s: (x, y) for s in SPLITS}
            if self.people is not None:  # applicants: validation and test halves
                px, py = (t.to(torch.float64) for t in self.people)
                half = len(px) // 2
                splits["validation"], splits["test"] = (px[:half], py[:half]), (px[half:],
                                                                                py[half:])
            return {role: splits for role in ROLES}
        perm = torch.randperm(len(x), generator=torch.Generator().manual_seed(self.seed))
        x, y = x[perm], y[perm]
        n_train = int(round(self.split[0] * len(x)))
        n_val = int(round(self.split[1] * len(x)))
        cuts = {"train": slice(0, n_train), "validation": slice(n_train, n_train + n_val),
                "test": slice(n_train + n_val, None)}
        splits = {s: (x[c], y[c]) for s, c in cuts.items()}
        return {role: splits for role in ROLES}


DataSource = SCMSamples | PublishedSamples | TableSamples
