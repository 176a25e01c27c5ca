"""Study design: arm assignment, counterbalanced plan order, distance designs.

Everything is a pure function of the protocol seed and the participant's design number (their
order of consent, ``consent_seq``: 0, 1, 2, ...; protocols.running.admission), so a study is
reproducible, a resumed participant gets exactly what they would have got, and visits that
never consent change nobody's assignment. The functions call it ``seq``.

- Assignment (between participants): permuted blocks. Block b holds every arm ``weight``
  times; its order is a seeded permutation, and participant seq gets position seq mod B of
  block seq div B (B = block size). Arms stay balanced after every complete block.
- Plan order: ``counterbalanced`` uses a Williams design (a Latin square balanced for
  first-order carry-over: each plan follows each other plan equally often; 2n rows for odd
  n), row seq mod rows; ``random`` a seeded permutation; ``fixed`` the design's order.
- Distance designs pick n plans from one person's candidates:
  ``tominaga`` (the reference user study, section 3.2.3): one of the sparsest (least L0, ties at random),
  one of the most proximate among the rest (least L1, ties at random) and n - 2 at random;
  ``stratified``: sort by the distance, cut into n bins of (almost) equal count and draw one
  plan per bin, which spreads the plans over the person's whole distance range.
  A person with fewer than n candidates gets them all.
"""

from __future__ import annotations

import numpy as np

from protocols.definition.schema import Protocol

# Stream ids keep the seeded draws of different purposes independent.
STREAM_ASSIGN, STREAM_ORDER, STREAM_DESIGN, STREAM_PERSONA, STREAM_HARE = 11, 12, 13, 14, 15
STREAM_FALLBACK = 16


def rng_for(seed: int, stream: int, *keys: int) -> np.random.Generator:
    """The generator of one purpose (``stream``) for one participant/arm (``keys``)."""
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, stream, *(int(k) for k in keys)])


def assign_arm(protocol: Protocol, seq: int) -> str:
    """The arm of participant ``seq`` (permuted blocks; 'within' when every arm is shown)."""
    if protocol.assignment == "within":
        return "within"
    return block_preference(protocol, seq)[0]


def block_preference(protocol: Protocol, seq: int) -> list[str]:
    """Participant ``seq``'s permuted block read from their position on, wrapping around:
    their own arm (``assign_arm``) first, then the arms the block gives next. Quotas break
    ties between arms of equal shortfall by it (protocols.definition.quotas): with equal
    targets and weights and nobody leaving, the arms given earlier in the block have the
    smaller shortfalls, so quotas assign exactly as the blocks do."""
    block = [a.id for a in protocol.arms for _ in range(int(a.weight))]
    b, pos = divmod(seq, len(block))
    order = rng_for(protocol.seed, STREAM_ASSIGN, b).permutation(len(block))
    return [block[int(order[(pos + k) % len(block)])] for k in range(len(block))]


def williams(n: int) -> list[list[int]]:
    """Rows of a Williams design for n treatments (n rows if n is even, else 2n)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    first = [0]
    lo, hi = 1, n - 1
    for k in range(1, n):
        if k % 2:
            first.append(lo)
            lo += 1
        else:
            first.append(hi)
            hi -= 1
    rows = [[(v + r) % n for v in first] for r in range(n)]
    if n % 2:
        rows += [list(reversed(r)) for r in rows]
    return rows


def plan_order(protocol: Protocol, seq: int, n: int) -> list[int]:
    """The display order of a participant's n plans (indices into the design's order)."""
    if n <= 1:
        return list(range(n))
    kind = protocol.plans.order
    if kind == "fixed":
        return list(range(n))
    if kind == "random":
        return [int(i) for i in rng_for(protocol.seed, STREAM_ORDER, seq).permutation(n)]
    rows = williams(n)
    return rows[seq % len(rows)]


def select_tominaga(
    sparsity: np.ndarray, proximity: np.ndarray, n: int, rng: np.random.Generator,
    ties: str = "random",
) -> list[tuple[int, str]]:
    """(candidate index, reason) of n plans: sparsest, most proximate, random others.

    ``ties``: among several sparsest (most proximate) candidates the paper takes any one:
    ``random`` draws it; ``nearest`` takes the one of least proximity (sparsity) first, the
    smallest jump among the sparsest, and draws among what is still tied; both are the
    paper's rule."""
    m = len(sparsity)
    if m == 0:
        return []
    free = np.ones(m, dtype=bool)
    out: list[tuple[int, str]] = []

    def least(key: np.ndarray, then: np.ndarray) -> int:
        k = np.where(free, key, np.inf)
        tied = np.flatnonzero(k == k.min())
        if ties == "nearest":
            tied = tied[then[tied] == then[tied].min()]
        return int(rng.choice(tied))

    sp, pr = np.asarray(sparsity, dtype=float), np.asarray(proximity, dtype=float)
    for key, then, reason in ((sp, pr, "sparsest"), (pr, sp, "most_proximate")):
        if len(out) < n and free.any():
            i = least(key, then)
            out.append((i, reason))
            free[i] = False
    rest = np.flatnonzero(free)
    k = min(n - len(out), len(rest))
    if k > 0:
        out += [(int(i), "random") for i in rng.choice(rest, size=k, replace=False)]
    return out


def select_stratified(
    distance: np.ndarray, n: int, rng: np.random.Generator
) -> list[tuple[int, str]]:
    """(candidate index, reason) of one plan per equal-count distance bin, low to high."""
    m = len(distance)
    if m == 0:
        return []
    order = np.argsort(np.asarray(distance, dtype=float), kind="stable")
    bins = np.array_split(order, min(n, m))
    return [(int(rng.choice(b)), f"stratum_{k + 1}") for k, b in enumerate(bins)]
