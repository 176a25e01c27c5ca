"""Assignment, counterbalancing and distance designs."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from protocols.running import design


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_williams_rows_are_latin_and_carryover_balanced(n: int) -> None:
    rows = design.williams(n)
    assert len(rows) == (n if n % 2 == 0 else 2 * n)
    for r in rows:
        assert sorted(r) == list(range(n))
    for pos in range(n):
        assert Counter(r[pos] for r in rows) == Counter({k: len(rows) // n for k in range(n)})
    pairs = Counter((r[i], r[i + 1]) for r in rows for i in range(n - 1))
    assert len(set(pairs.values())) == 1 and len(pairs) == n * (n - 1)


def test_assignment_is_balanced_per_block_and_seeded(protocol_text) -> None:
    p = protocol_text()
    arms = [design.assign_arm(p, s) for s in range(40)]
    for b in range(0, 40, 2):
        assert sorted(arms[b:b + 2]) == ["oracle", "pool"]
    assert arms == [design.assign_arm(p, s) for s in range(40)]
    other = protocol_text(("seed: 5", "seed: 6"))
    assert arms != [design.assign_arm(other, s) for s in range(40)]
    weighted = protocol_text(("{id: pool, method: pool,", "{id: pool, weight: 3, method: pool,"))
    counts = Counter(design.assign_arm(weighted, s) for s in range(40))
    assert counts == {"pool": 30, "oracle": 10}


def test_tominaga_design_picks_sparsest_most_proximate_and_random() -> None:
    rng = np.random.default_rng(0)
    l0 = np.array([3, 1, 2, 1, 4, 2, 3, 4])
    l1 = np.array([0.9, 0.5, 0.1, 0.6, 0.8, 0.3, 0.2, 0.7])
    picks = design.select_tominaga(l0, l1, 5, rng)
    idx = [i for i, _ in picks]
    assert [r for _, r in picks] == ["sparsest", "most_proximate", "random", "random", "random"]
    assert l0[idx[0]] == 1 and idx[1] == 2 and len(set(idx)) == 5
    assert design.select_tominaga(l0[:2], l1[:2], 5, rng) != []
    assert len(design.select_tominaga(l0[:2], l1[:2], 5, rng)) == 2


def test_stratified_design_spreads_over_distance() -> None:
    d = np.linspace(0, 1, 100)
    picks = design.select_stratified(d, 4, np.random.default_rng(1))
    chosen = sorted(d[i] for i, _ in picks)
    for k, v in enumerate(chosen):
        assert k / 4 <= v <= (k + 1) / 4
    assert len(design.select_stratified(d[:2], 4, np.random.default_rng(1))) == 2
    assert design.select_stratified(d[:0], 4, np.random.default_rng(1)) == []


def test_tominaga_ties_nearest_takes_the_smallest_jump_among_the_sparsest() -> None:
    """Both tie rules pick one of the sparsest (the paper's rule); ``nearest`` the one of
    least L1 among them, whatever the draw."""
    l0 = np.array([1.0, 1.0, 1.0, 2.0, 3.0])
    l1 = np.array([0.9, 0.2, 0.6, 0.1, 0.5])
    for seed in range(20):
        rng = np.random.default_rng(seed)
        first = design.select_tominaga(l0, l1, 2, rng, ties="nearest")[0]
        assert first == (1, "sparsest")
        drawn = design.select_tominaga(l0, l1, 2, np.random.default_rng(seed))[0]
        assert drawn[0] in (0, 1, 2) and drawn[1] == "sparsest"
    assert {design.select_tominaga(l0, l1, 1, np.random.default_rng(s))[0][0]
            for s in range(40)} == {0, 1, 2}
