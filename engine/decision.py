"""Decision models (the automated decision system, ADS) and who they reject.

``Classifier`` is the contract every decision model meets (``predict_proba``, ``decision``);
``rejected_rows`` is the one selection of the people a model rejects (benchmarks, training,
studies and the fairness case study all draw from it), ``fixed_test_people`` a fixed sample of
them (the HARE paper's 150 test people); ``decide`` is the numpy view a study
uses. Three models:

``BayesDecision``: the Bayes-optimal rule under the exact SCM, h(x) = 1[P(Y=1 | x) >= 1/2],
a reference for how much of a result is due to the trained model.

``RuleDecision``: a pool world's fixed rule (engine.scenarios.rules), nothing trained.

``DecisionModel``: the trained MLP classifier h(x),

    z = (x - mu) / sigma                      (standardization over the training split)
    logit(x) = f_theta(z)                     (ReLU MLP, CARMA's two hidden layers of 32;
                                               no hidden layer: a logistic regression)
    predict_proba(x) = sigmoid(logit(x)),     decision(x) = 1[logit(x) >= 0]

trained by minimizing the binary cross-entropy of the labels with Adam (batch 256, 500
epochs as in the paper's setup; learning rate 3e-3 decayed to 0 on a cosine, the paper's
value being lost in its text), keeping the parameters with the best validation accuracy.
On the deterministic Loan labels of CARMA's published classifier split this reaches 0.99
test accuracy (seed 0; a constant 1e-3 or larger networks stayed at 0.987-0.990).
Once trained it is fixed: recourse methods only query it (and differentiate through it).
Inputs are (n, d) arrays in model units, float32 or float64; outputs are float32 (bool for
``decision``).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from engine.networks import mlp
from engine.scenarios.base import Scenario
from engine.scm import ArrayLike, WorldModelInputError, as_batch


class Classifier(Protocol):
    """A decision model as recourse methods and studies see it.

    Any object with ``predict_proba`` and ``decision`` over a batch of profiles, e.g. the
    Bayes rule of a scenario's SCM or a trained ``DecisionModel``:

    >>> from engine import BayesDecision, get_scenario
    >>> loan = get_scenario("loan")
    >>> clf = BayesDecision(loan)
    >>> test_x, _ = loan.dataset["test"]        # the test split: (x, y)
    >>> x = test_x[:3]
    >>> clf.predict_proba(x).shape, clf.decision(x).dtype
    (torch.Size([3]), torch.bool)
    """

    def predict_proba(self, x: Tensor) -> Tensor: ...

    def decision(self, x: Tensor) -> Tensor: ...


class BayesDecision:
    """The Bayes-optimal decision rule under the exact SCM: h(x) = 1[l(x) >= 0], i.e.
    P(Y=1 | x) >= 1/2 (with the deterministic label rule it makes no error at all).

    >>> import torch
    >>> from engine import BayesDecision, get_scenario
    >>> loan = get_scenario("loan")
    >>> rule = BayesDecision(loan)
    >>> test_x, _ = loan.dataset["test"]        # the test split: (x, y)
    >>> x = test_x[:4]
    >>> rule.decision(x).tolist() == (loan.scm.label_logit(x) >= 0).tolist()
    True
    """

    def __init__(self, scenario: Scenario) -> None:
        scm = scenario.exact_scm  # a data world's: the SCM that made its data, if known
        if scm is None:
            raise ValueError(f"the Bayes rule needs the exact SCM; scenario {scenario.name!r} "
                             f"is a {scenario.world_kind} world without one")
        self.scm = scm

    def predict_proba(self, x: Tensor) -> Tensor:
        return self.scm.label_proba(x.double()).to(x.dtype)

    def decision(self, x: Tensor) -> Tensor:
        return self.scm.label_logit(x.double()) >= 0


class RuleDecision:
    """A pool world's fixed rule as a decision model: h(x) = rule(display values of x)
    (engine.scenarios.rules); ``predict_proba`` is 1 where favourable, else 0."""

    def __init__(self, scenario: Scenario) -> None:
        if scenario.pool is None:
            raise ValueError(f"scenario {scenario.name!r} has no fixed rule (a "
                             f"{scenario.world_kind} world)")
        self.scenario = scenario
        self.pool = scenario.pool

    def decision(self, x: Tensor) -> Tensor:
        ok = self.pool.decide(self.scenario.display_columns(x.detach().double().numpy()))
        return torch.from_numpy(ok)

    def predict_proba(self, x: Tensor) -> Tensor:
        return self.decision(x).to(x.dtype if x.is_floating_point() else torch.float32)


def decide(classifier: Classifier, x: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(P(favourable), favourable) of profiles x (n, d) or (d,), as numpy arrays.

    >>> from engine import BayesDecision, decide, get_scenario, rejected_rows
    >>> loan = get_scenario("loan")
    >>> clf = BayesDecision(loan)
    >>> test_x, _ = loan.dataset["test"]        # the test split: (x, y)
    >>> x = test_x[rejected_rows(loan, clf)[:2]].numpy()
    >>> proba, approved = decide(clf, x)
    >>> approved.tolist(), bool((proba < 0.5).all())
    ([False, False], True)
    """
    t = torch.as_tensor(np.atleast_2d(np.asarray(x, dtype=np.float32)))
    with torch.no_grad():
        proba = classifier.predict_proba(t).double().numpy()
        ok = classifier.decision(t).bool().numpy()
    return proba, ok


def rejected_rows(
    scenario: Scenario, classifier: Classifier, split: str = "test", *,
    within_bounds: bool = False,
) -> np.ndarray:
    """Row indices (in order) of the split's profiles the model rejects; ``within_bounds``
    keeps only those inside the training range (a study's profile form accepts them).

    >>> from engine import BayesDecision, get_scenario, rejected_rows
    >>> loan = get_scenario("loan")
    >>> clf = BayesDecision(loan)
    >>> rows = rejected_rows(loan, clf)
    >>> test_x, _ = loan.dataset["test"]        # the test split: (x, y)
    >>> clf.decision(test_x[rows]).any().item()
    False
    >>> bool((rows[1:] > rows[:-1]).all())        # in order
    True
    """
    x = scenario.dataset[split][0]
    with torch.no_grad():
        keep = ~classifier.decision(x.float()).bool()
    if within_bounds:
        lo, hi = scenario.bounds
        keep &= ((x >= lo) & (x <= hi)).all(dim=1)
    return torch.nonzero(keep).flatten().numpy()


def fixed_test_people(
    scenario: Scenario, classifier: Classifier, n: int = 150, seed: int = 0,
    split: str = "test",
) -> np.ndarray:
    """Row indices into ``split`` of ``n`` people the classifier rejects, fixed by ``seed``:
    the split's rejected rows in a random order drawn once (numpy's default generator at
    ``seed``), the first ``n`` of them (fewer when fewer are rejected: German Credit's test
    split of 250 rows holds fewer than 150 rejections). The HARE paper's "150 fixed
    individual samples taken from the test-set"; the same model and seed give the same
    people in every process (``scenario.dataset[split][0][rows]`` are their profiles).

    >>> from engine import BayesDecision, fixed_test_people, get_scenario, rejected_rows
    >>> loan = get_scenario("loan")
    >>> clf = BayesDecision(loan)
    >>> rows = fixed_test_people(loan, clf, n=5, seed=0)
    >>> len(rows), set(rows) <= set(rejected_rows(loan, clf))
    (5, True)
    >>> bool((fixed_test_people(loan, clf, n=5, seed=0) == rows).all())   # fixed by the seed
    True
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    rejected = rejected_rows(scenario, classifier, split)
    order = np.random.default_rng(seed).permutation(len(rejected))
    return rejected[order[:n]]


DECISION_OPTIMIZERS: tuple[str, ...] = ("adam", "sgd")


@dataclass(frozen=True)
class DecisionConfig:
    """Training hyper-parameters (the paper's setup: batch 256, 500 epochs, Adam)."""

    hidden: tuple[int, ...] = (32, 32)
    epochs: int = 500
    batch_size: int = 256
    lr: float = 3e-3
    schedule: str = "cosine"
    seed: int = 0
    optimizer: str = "adam"
    # Cost-sensitive training: the loss weight w of an unfavourable row (label 0), so the
    # loss is -mean(y log h + w (1 - y) log(1 - h)); 1 is plain BCE. A data set with few
    # unfavourable rows gets a model that rejects about as often as the data does.
    unfavourable_weight: float = 1.0

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 1 or self.lr <= 0 or min(self.hidden, default=1) < 1:
            raise ValueError("epochs, batch_size, lr and the hidden widths must be positive "
                             "(no hidden layer: a logistic regression)")
        if not self.unfavourable_weight > 0:
            raise ValueError(f"unfavourable_weight must be positive, got "
                             f"{self.unfavourable_weight!r}")
        if self.schedule not in ("constant", "cosine"):
            raise ValueError(f"schedule must be constant or cosine, got {self.schedule!r}")
        if self.optimizer not in DECISION_OPTIMIZERS:
            raise ValueError(
                f"optimizer must be one of {', '.join(DECISION_OPTIMIZERS)}, got "
                f"{self.optimizer!r}"
            )

    @classmethod
    def reference(cls) -> DecisionConfig:
        """CARMA's reference classifier training (``recourse_utils/clf_trainer.py`` with
        ``_params/_clf/loan.yaml``): plain SGD at a constant lr 0.001, batch 256, 500 epochs,
        two hidden layers of 32. Its logits stay moderate (on the loan-carma rejections
        -5.6 .. -0.3, 5%-95%; test accuracy 0.911) where our Adam model's saturate (-165 ..
        -6): the paper's validity hinge on 2 h - 1 needs a non-saturated h to have a gradient
        (engine.recourse.icarma.training)."""
        return cls(lr=1e-3, schedule="constant", optimizer="sgd")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["hidden"] = list(self.hidden)
        if self.optimizer == "adam":  # added later: keep the fingerprints of Adam models
            del d["optimizer"]
        if self.unfavourable_weight == 1.0:  # likewise: plain BCE keeps its fingerprints
            del d["unfavourable_weight"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DecisionConfig:
        return cls(**{**d, "hidden": tuple(d["hidden"])})


@dataclass
class DecisionLog:
    """Training record: validation accuracy per epoch checked, the epoch kept, wall time."""

    epochs: list[int] = field(default_factory=list)
    val_accuracy: list[float] = field(default_factory=list)
    best_epoch: int = 0
    seconds: float = 0.0


class DecisionModel(nn.Module):
    """h(x) = sigmoid(f_theta((x - mu) / sigma)); ``forward`` returns the logit, shape (n,).

    >>> import torch
    >>> from engine import DecisionModel
    >>> model = DecisionModel(mean=torch.zeros(3), std=torch.ones(3), hidden=(8,))
    >>> logits = model(torch.zeros(5, 3))     # untrained: shapes only
    >>> logits.shape
    torch.Size([5])
    """

    def __init__(self, mean: Tensor, std: Tensor, hidden: tuple[int, ...] = (32, 32)) -> None:
        super().__init__()
        if mean.ndim != 1 or std.shape != mean.shape or (std <= 0).any():
            raise ValueError("mean and std must be (d,) vectors with positive std")
        self.register_buffer("mean", mean.to(torch.float32))
        self.register_buffer("std", std.to(torch.float32))
        self.hidden = tuple(hidden)
        self.net = mlp(int(mean.shape[0]), self.hidden, 1)

    @property
    def d(self) -> int:
        return int(self.mean.shape[0])

    def _input(self, x: ArrayLike) -> Tensor:
        if isinstance(x, Tensor) and x.ndim == 2 and x.shape[1] == self.d:
            # Fast path for the hot loops of the recourse methods: no float64 round trip.
            t = x.to(torch.float32)
            if not torch.isfinite(t).all():
                raise WorldModelInputError("x holds NaN or inf")
            return t
        t, _ = as_batch(x, self.d, "x")
        return t.to(torch.float32)

    def forward(self, x: ArrayLike) -> Tensor:
        z = (self._input(x) - self.mean) / self.std
        return self.net(z).reshape(-1)

    def logit_unchecked(self, x: Tensor) -> Tensor:
        """``forward`` of a checked float32 (n, d) tensor without the check and the module
        calls (hot loops of searches: the same operations, so the same bits)."""
        z = (x - self.mean) / self.std
        for layer in self.net:
            if isinstance(layer, nn.Linear):
                z = nn.functional.linear(z, layer.weight, layer.bias)
            elif isinstance(layer, nn.ReLU):
                z = torch.relu(z)
            else:
                z = layer(z)
        return z.reshape(-1)

    def predict_proba(self, x: ArrayLike) -> Tensor:
        """P(favourable | x) under the model, shape (n,)."""
        return torch.sigmoid(self(x))

    def decision(self, x: ArrayLike) -> Tensor:
        """True where the model approves (favourable), shape (n,) bool."""
        return self(x) >= 0


def accuracy(model: DecisionModel, x: Tensor, y: Tensor) -> float:
    """Share of rows where the decision equals the label."""
    with torch.no_grad():
        return float((model.decision(x) == y.bool()).float().mean())


def train_decision_model(
    x_train: Tensor,
    y_train: Tensor,
    x_val: Tensor,
    y_val: Tensor,
    config: DecisionConfig,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[DecisionModel, DecisionLog]:
    """Fit the MLP by BCE with Adam (or SGD, ``optimizer``), an unfavourable row weighted
    by ``unfavourable_weight``; keep the state with the best validation accuracy."""
    start = time.perf_counter()
    torch.manual_seed(config.seed)
    model = DecisionModel(x_train.mean(dim=0), x_train.std(dim=0), config.hidden)
    xt, yt = x_train.to(torch.float32), y_train.to(torch.float32)
    opt: torch.optim.Optimizer = (
        torch.optim.SGD(model.parameters(), lr=config.lr)
        if config.optimizer == "sgd"
        else torch.optim.Adam(model.parameters(), lr=config.lr)
    )
    steps = config.epochs * math.ceil(len(xt) / config.batch_size)
    schedule = (
        torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
        if config.schedule == "cosine"
        else None
    )
    log = DecisionLog()
    best_acc, best_state = -math.inf, copy.deepcopy(model.state_dict())
    check_every = max(1, config.epochs // 50)
    gen = torch.Generator().manual_seed(config.seed)
    w0 = config.unfavourable_weight
    for epoch in range(1, config.epochs + 1):
        model.train()
        perm = torch.randperm(len(xt), generator=gen)
        for b in range(0, len(perm), config.batch_size):
            idx = perm[b : b + config.batch_size]
            weight = None if w0 == 1.0 else 1.0 + (w0 - 1.0) * (1.0 - yt[idx])
            loss = F.binary_cross_entropy_with_logits(model(xt[idx]), yt[idx], weight=weight)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if schedule is not None:
                schedule.step()
        if epoch % check_every == 0 or epoch == config.epochs:
            model.eval()
            acc = accuracy(model, x_val, y_val)
            log.epochs.append(epoch)
            log.val_accuracy.append(acc)
            if acc > best_acc:
                best_acc, log.best_epoch = acc, epoch
                best_state = copy.deepcopy(model.state_dict())
        if progress is not None:
            progress(epoch, config.epochs)
    model.load_state_dict(best_state)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    log.seconds = time.perf_counter() - start
    return model, log


def favourable_logit(classifier: Any, x: Tensor) -> Tensor:
    """logit P(favourable | x), shape (n,), differentiable in x: the decision model's own
    forward pass when it is a torch module (exact even for very confident decisions), else
    the logit of ``predict_proba`` clamped to [1e-7, 1 - 1e-7]."""
    if isinstance(classifier, nn.Module):
        return classifier(x.to(torch.float32)).reshape(-1).to(x.dtype)
    p = classifier.predict_proba(x.to(torch.float32)).to(x.dtype).reshape(-1).clamp(1e-7, 1 - 1e-7)
    return torch.log(p) - torch.log1p(-p)
