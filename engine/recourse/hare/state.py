"""The HARE state machine, batched over people: one machine serves simulated people (a whole
batch answering at once) and one real participant (a batch of one, ``HareSession``).

Per person u with base shift r_0 (engine.recourse.shift_actions), budget B and T iterations
(k = B // T queries per iteration), Algorithm 4 of HARE:

    for t = 1..T:
        C_t = BoundaryPointSearch(ActionableSampling(r_{t-1}, k, gamma_t))   (hare.search)
        tournament over C_t: the first candidate is the winner; it meets the others in turn,
            the person says which of the two they prefer (relative feedback, k - 1 questions)
        r_t = the winner
        ask whether r_t is acceptable (absolute feedback IE, 1 question); yes stops
    return r_T (or the accepted r_t)

so nobody is asked more than T (k - 1) + T = T k <= B questions: comparisons and accept
questions together stay within the budget. ``asked`` counts both kinds.

The state is plain data (``to_dict``/``from_dict``, exact float round trip through JSON), and
every random draw comes from a generator seeded by (seed, t), so a restored machine asks the
same next question.

**Proposing together.** A machine built or driven with ``defer=True`` does not search when
it needs iteration t's contenders: it marks itself ``pending``, and ``propose_all(machines)``
runs the pending machines' candidate and boundary searches as one batched search
(engine.recourse.hare.search, ``groups``), with each machine's own generator: every machine
gets exactly the contenders it would have found alone.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

import torch
from torch import Tensor

from engine.recourse.base import RecourseContext
from engine.recourse.hare.config import LEGACY, HareConfig
from engine.recourse.hare.search import (
    actionable_sampling,
    boundary_point_search,
    is_favourable,
    random_directions,
)
from engine.recourse.shift_actions import shown_counterfactuals

Phase = Literal["compare", "accept", "done"]


@dataclass
class Query:
    """What the machine asks now: ``ask`` (n,) says who has to answer."""

    kind: Literal["compare", "accept", "done"]
    options: list[Tensor]  # shifts (n, d): [left, right] to compare, [winner] to accept
    ask: Tensor


class HareState:
    """The batched machine (module docstring). Build with ``start``; drive with
    ``query`` / ``answer`` / ``accept`` until ``phase == "done"``; ``result`` is r_T.

    **The paper's configuration (the defaults).** ``gamma_schedule="paper"``: gamma_t = gamma
    (= 1, section 4.2) in every iteration, so a candidate is r_{t-1} + gamma p with p a unit
    direction in shift units (ranges, as the paper's features scaled to [0, 1]).
    ``final_accept="ask"``: the accept question is asked after every tournament, the last one
    included, and counts against B, as Algorithm 4 does.

    **Named variants (ours).** ``gamma_schedule="halve"``: the search radius follows the size of
    the base plan and shrinks, gamma_1 = gamma * max(|r_0|, gamma_floor) (L2 of the shift) and
    gamma_{t+1} = shrink * gamma_t (shrink = 0.5). ``final_accept="skip"``: the accept question
    after the last tournament, which cannot change the result, is not asked (T (k - 1) + (T - 1)
    <= B - 1 questions). Both together are this machine's behaviour before it followed the paper,
    and a stored state without these fields restores them (``from_dict``).

    ``keep_incumbent`` (default on, as the paper's released code runs every table): r_{t-1} is
    contender 0 of iteration t's tournament, beside k - 1 new candidates, so a later iteration
    never ends worse than the plan it started from; the question count is the same. The base
    plan r_0, the one incumbent no search has calibrated, goes through BoundaryPointSearch with
    iteration 1's candidates (``calibrate="all"``), as the released code searches its initial
    counterfactual's boundary point with the candidates it joins. ``keep_incumbent=False`` is
    Algorithm 4 as the paper's text writes it (Algorithm 1, line 8: the contenders are the new
    candidates only).

    ``iterations_reading="code"`` (engine.recourse.hare.config) reads T as the paper's released
    code does: B // T rounds of T new candidates (B at T = 1) beside the incumbent, no accept
    question (``config.rounds`` rounds of ``config.new_candidates``).

    Under plan rules nobody chooses between two plans that read the same as shown
    (plan_rules.reads_same): the pair resolves itself (the winner stays) and ``unasked_same``
    counts such pairs per person (fewer than two distinct contenders: no comparison that round).
    Nobody is asked about a plan the decision model rejects: a pair with an unfavourable plan
    resolves itself (the favourable one wins; two unfavourable ones keep the winner), and an
    unfavourable winner is not offered for acceptance; when no contender of an iteration is
    favourable, the person keeps r_{t-1} (so HARE's success rate is its base's, as the paper
    reports). With ``calibrate="winner"`` (the paper's ablation) candidates enter the tournament
    uncalibrated and only each iteration's winner is moved to the boundary.
    """

    def __init__(self, context: RecourseContext, config: HareConfig, data: dict[str, Any],
                 *, defer: bool = False):
        self.context = context
        self.config = config
        self.defer = defer  # searches wait for propose_all (module docstring)
        self.pending = bool(data.get("pending", False))
        self.seed: int = data["seed"]
        self.t: int = data["t"]
        self.phase: Phase = data["phase"]
        self.pos: int = data["pos"]
        t64 = torch.float64
        self.x = torch.tensor(data["x"], dtype=t64)
        self.allowed = torch.tensor(data["allowed"], dtype=torch.bool)
        self.incumbent = torch.tensor(data["incumbent"], dtype=t64)
        self.incumbent_valid = torch.tensor(data["incumbent_valid"], dtype=torch.bool)
        self.gamma = torch.tensor(data["gamma"], dtype=t64)
        n, d = self.x.shape
        k = len(data["valid"][0]) if data["valid"] else 0
        self.contenders = torch.tensor(data["contenders"], dtype=t64).reshape(n, k, d)
        self.valid = torch.tensor(data["valid"], dtype=torch.bool).reshape(n, k)
        self.winner = torch.tensor(data["winner"], dtype=torch.long)
        self.done = torch.tensor(data["done"], dtype=torch.bool)
        self.accepted = torch.tensor(data["accepted"], dtype=torch.bool)
        self.asked = torch.tensor(data["asked"], dtype=torch.long)
        self.unasked_same = torch.tensor(data.get("unasked_same", [0] * n), dtype=torch.long)
        self._shown: Tensor | None = None  # (n, k, d) the contenders as shown, made once

    # ---- construction and persistence -------------------------------------------------
    @classmethod
    def start(
        cls,
        context: RecourseContext,
        config: HareConfig,
        x: Tensor,
        allowed: Tensor,
        base_shift: Tensor,
        base_valid: Tensor,
        seed: int,
        *,
        defer: bool = False,
    ) -> HareState:
        n, d = x.shape
        gamma = torch.full((n,), config.gamma, dtype=torch.float64)
        if config.gamma_schedule == "halve":
            gamma = config.gamma * base_shift.norm(dim=1).clamp(min=config.gamma_floor)
        data = {
            "seed": int(seed), "t": 0, "phase": "compare", "pos": 1,
            "x": x.tolist(), "allowed": allowed.tolist(),
            "incumbent": base_shift.tolist(), "incumbent_valid": base_valid.tolist(),
            "gamma": gamma.tolist(), "contenders": [], "valid": [], "winner": [0] * n, "done": [False] * n,
            "accepted": [False] * n, "asked": [0] * n,
        }
        state = cls(context, config, data, defer=defer)
        state._propose()
        return state

    def to_dict(self, *, pending: bool = False) -> dict[str, Any]:
        """The machine as plain data. A ``pending`` machine (its next contenders not searched
        yet) is stored only when asked (``pending=True``: to search it in another process;
        its contenders are still the last iteration's, which the search replaces)."""
        if self.pending and not pending:
            raise ValueError("the machine's next contenders are not searched yet (propose_all)")
        return ({"pending": True} if self.pending else {}) | {
            "config": asdict(self.config), "seed": self.seed, "t": self.t,
            "phase": self.phase, "pos": self.pos, "x": self.x.tolist(),
            "allowed": self.allowed.tolist(), "incumbent": self.incumbent.tolist(),
            "incumbent_valid": self.incumbent_valid.tolist(), "gamma": self.gamma.tolist(),
            "contenders": self.contenders.tolist(), "valid": self.valid.tolist(),
            "winner": self.winner.tolist(), "done": self.done.tolist(),
            "accepted": self.accepted.tolist(), "asked": self.asked.tolist(),
            "unasked_same": self.unasked_same.tolist(),
        }

    @classmethod
    def from_dict(cls, context: RecourseContext, data: dict[str, Any], *,
                  defer: bool = False) -> HareState:
        """A machine from ``to_dict``; a state stored before the schedule fields existed
        continues as it ran (``LEGACY``: halving gamma, no accept question after the last
        tournament, the text's reading of T)."""
        state = cls(context, HareConfig(**{**LEGACY, **data["config"]}), data, defer=defer)
        if state.pending and not defer:
            HareState.propose_all([state])
        return state

    # ---- the questions --------------------------------------------------------------------
    @property
    def n(self) -> int:
        return int(self.x.shape[0])

    def _rows(self, idx: Tensor) -> Tensor:
        return self.contenders[torch.arange(self.n), idx]

    def query(self) -> Query:
        """The current question (``ask`` marks who must answer it)."""
        if self.pending:
            raise ValueError("the machine's next contenders are not searched yet (propose_all)")
        if self.phase == "compare":
            return Query("compare", [self._rows(self.winner), self.contenders[:, self.pos]],
                         self._compare_mask())
        if self.phase == "accept":
            return Query("accept", [self.incumbent], self._accept_mask())
        return Query("done", [self.incumbent], torch.zeros(self.n, dtype=torch.bool))

    def _compare_mask(self) -> Tensor:
        return self._both_valid() & ~self._same_reading()

    def _both_valid(self) -> Tensor:
        return self.valid[torch.arange(self.n), self.winner] & self.valid[:, self.pos] & ~self.done

    def _same_reading(self) -> Tensor:
        """(n,) bool: the pair reads the same as shown; never without rules (module docstring)."""
        if self.context.rules is None:
            return torch.zeros(self.n, dtype=torch.bool)
        if self._shown is None:
            self._shown = shown_counterfactuals(self.context, self.x, self.contenders, self.allowed)
        rows = torch.arange(self.n)
        return (self._shown[rows, self.winner] == self._shown[rows, self.pos]).all(dim=1)

    def _accept_mask(self) -> Tensor:
        return self.incumbent_valid & ~self.done

    def answer(self, choice: Tensor) -> None:
        """Relative feedback: choice (n,) 0 = keep the left (winner), 1 = the right one;
        entries of people not asked are ignored."""
        if self.phase != "compare":
            raise ValueError(f"no comparison is pending (the machine is at {self.phase!r})")
        ask = self._compare_mask()
        choice = torch.as_tensor(choice, dtype=torch.long).reshape(-1)
        if choice.shape[0] != self.n or bool(((choice != 0) & (choice != 1) & ask).any()):
            raise ValueError(f"choice must hold {self.n} entries of 0 or 1")
        self.unasked_same += (self._both_valid() & self._same_reading()).long()
        self._resolve(ask & (choice == 1))
        self.asked += ask.long()
        self._advance()

    def accept(self, yes: Tensor) -> None:
        """Absolute feedback: yes (n,) bool; entries of people not asked are ignored."""
        if self.phase != "accept":
            raise ValueError(f"no acceptance question is pending (the machine is at {self.phase!r})")
        ask = self._accept_mask()
        yes = torch.as_tensor(yes, dtype=torch.bool).reshape(-1)
        if yes.shape[0] != self.n:
            raise ValueError(f"yes must hold {self.n} entries")
        self.accepted |= ask & yes
        self.done |= ask & yes
        self.asked += ask.long()
        self._next_iteration()

    @property
    def result(self) -> tuple[Tensor, Tensor]:
        """(r (n, d) the current plan's shift, its validity (n,))."""
        return self.incumbent, self.incumbent_valid

    # ---- transitions ----------------------------------------------------------------------
    def _resolve(self, take_right: Tensor) -> None:
        """Move the winner to the challenger where the person chose it, or automatically
        where only the challenger is favourable."""
        rows = torch.arange(self.n)
        auto = ~self.valid[rows, self.winner] & self.valid[:, self.pos] & ~self.done
        self.winner = torch.where(take_right | auto, torch.full_like(self.winner, self.pos),
                                  self.winner)

    def _advance(self) -> None:
        """Next challenger; pairs nobody has to judge resolve themselves."""
        self.pos += 1
        while self.pos < self.contenders.shape[1] and not bool(self._compare_mask().any()):
            self.unasked_same += (self._both_valid() & self._same_reading()).long()
            self._resolve(torch.zeros(self.n, dtype=torch.bool))
            self.pos += 1
        if self.pos >= self.contenders.shape[1]:
            self._end_tournament()

    def _end_tournament(self) -> None:
        z = self._rows(self.winner)
        valid = self.valid[torch.arange(self.n), self.winner]
        if self.config.calibrate == "winner":
            z, valid = boundary_point_search(
                self.context, self.x, z, self.allowed, bisections=self.config.bisections,
                margin=self.config.boundary_margin,
            )
        # done people keep their plan; nobody trades a favourable plan for an unfavourable one
        stay = self.done | (self.incumbent_valid & ~valid)
        self.incumbent = torch.where(stay.unsqueeze(1), self.incumbent, z)
        self.incumbent_valid = torch.where(stay, self.incumbent_valid, valid)
        ask = self.config.asks_accept(last=self.t + 1 >= self.config.rounds)
        if ask and bool(self._accept_mask().any()):
            self.phase = "accept"
        else:
            self._next_iteration()

    def _next_iteration(self) -> None:
        self.t += 1
        if self.t >= self.config.rounds or bool(self.done.all()):
            self.phase = "done"
            return
        if self.config.gamma_schedule == "halve":
            self.gamma = self.gamma * self.config.shrink
        self._propose()

    def _propose(self) -> None:
        """Contenders of round t: ``config.new_candidates`` new candidates, beside the
        incumbent under ``keep_incumbent`` (deferred: marked pending for ``propose_all``)."""
        self.pending = True
        if not self.defer:
            HareState.propose_all([self])

    @staticmethod
    def propose_all(machines: list[HareState]) -> None:
        """Run the pending searches of ``machines`` (one machine: its own, deferred or not)
        as one batched search (module docstring); machines of one context and config."""
        todo = [m for m in machines if m.pending]
        while todo:
            HareState._search(todo)
            todo = [m for m in todo if m.pending]  # a self-resolving tournament goes on

    @staticmethod
    def _search(machines: list[HareState]) -> None:
        first = machines[0]
        cfg, context = first.config, first.context
        if any(m.config != cfg or m.context is not context for m in machines):
            raise ValueError("machines proposing together need the same context and config")
        k = cfg.new_candidates
        groups = HareState._groups(machines)
        x, incumbent, allowed, gamma = HareState._joined(machines, "x", "incumbent", "allowed",
                                                         "gamma")
        start = torch.cat([random_directions(m.allowed, k, m._generator()) for m in machines])
        n, d = x.shape
        cand = actionable_sampling(
            context, x, incumbent, allowed, gamma, k, first._generator(),
            steps=cfg.steps, lr=cfg.lr, lam=cfg.lam, start=start, groups=groups,
        ).reshape(n * k, d)
        xs = x.repeat_interleave(k, dim=0)
        allowed = allowed.repeat_interleave(k, dim=0)
        rows = None if groups is None else [g * k for g in groups]
        if cfg.calibrate == "all":
            cand, valid = boundary_point_search(
                context, xs, cand, allowed, bisections=cfg.bisections, groups=rows,
                margin=cfg.boundary_margin,
            )
        else:
            valid = is_favourable(context, xs, cand, allowed, groups=rows,
                                  margin=cfg.boundary_margin)
        sizes = [m.n * k for m in machines]
        firsts = HareState._first_contenders(machines)
        for m, c, v, f in zip(machines, cand.split(sizes), valid.split(sizes), firsts,
                              strict=True):
            m._install(c.reshape(m.n, k, d), v.reshape(m.n, k), f)

    @staticmethod
    def _first_contenders(machines: list[HareState]) -> list[tuple[Tensor, Tensor] | None]:
        """Per machine, the incumbent as contender 0 (None without ``keep_incumbent``): the
        base plan r_0 calibrated by BoundaryPointSearch under ``calibrate="all"`` (searched
        together: one batch over the machines at iteration 1), a later r_{t-1} as it is (it
        is a calibrated winner already)."""
        cfg = machines[0].config
        if not cfg.keep_incumbent:
            return [None] * len(machines)
        firsts: list[tuple[Tensor, Tensor] | None] = [
            (m.incumbent, m.incumbent_valid) for m in machines]
        fresh = [i for i, m in enumerate(machines) if m.t == 0 and cfg.calibrate == "all"]
        if fresh:
            ms = [machines[i] for i in fresh]
            x, inc, allowed, inc_valid = HareState._joined(ms, "x", "incumbent", "allowed",
                                                           "incumbent_valid")
            z, valid = boundary_point_search(context=ms[0].context, x=x, cand=inc,
                                             allowed=allowed, bisections=cfg.bisections,
                                             groups=HareState._groups(ms),
                                             margin=cfg.boundary_margin)
            valid = valid & inc_valid
            sizes = [m.n for m in ms]
            for i, zi, vi in zip(fresh, z.split(sizes), valid.split(sizes), strict=True):
                firsts[i] = (zi, vi)
        return firsts

    @staticmethod
    def _joined(machines: list[HareState], *names: str) -> tuple[Tensor, ...]:
        """The machines' tensors ``names``, their people's rows one after another."""
        return tuple(torch.cat([getattr(m, a) for m in machines]) for a in names)

    @staticmethod
    def _groups(machines: list[HareState]) -> list[int] | None:
        """Rows per machine of a joined search (None for one machine: no grouping)."""
        return None if len(machines) == 1 else [m.n for m in machines]

    def _generator(self) -> torch.Generator:
        return torch.Generator().manual_seed(self.seed * 1_000_003 + self.t)

    def _install(self, contenders: Tensor, valid: Tensor,
                 first: tuple[Tensor, Tensor] | None = None) -> None:
        """Take iteration t's searched candidates (and the incumbent as contender 0, ``first``)
        and start its tournament."""
        self.pending = False
        self._shown = None
        self.contenders, self.valid = contenders, valid
        if first is not None:
            self.contenders = torch.cat([first[0][:, None], self.contenders], dim=1)
            self.valid = torch.cat([first[1][:, None], self.valid], dim=1)
        self.winner = torch.zeros(self.n, dtype=torch.long)
        self.phase = "compare"
        self.pos = 0
        self._advance()
