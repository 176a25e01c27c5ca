"""A scenario's causal graph (a data world's, or a tabular world's with a graph), checked: edges,
unknown features, cycles, causal order; and as parent indices.

Edges come as (index in ``world.graph``, parent, child) with parent None for an edge that is
not written ``parent -> child`` (schema_base.CausalGraph.edges); problems are (location, message)
pairs at the file's paths (``world.graph[1]``, ``world.graph``, ``features[2]``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Problems = list[tuple[tuple[Any, ...], str]]


def graph_problems(edges: list[tuple[int, str | None, str]], names: list[str]) -> Problems:
    """Malformed edges, unknown features, self-loops, cycles, and features not listed in a
    causal order (every parent before its children: the flow and the counterfactuals
    compute features in column order)."""
    problems: Problems = []
    parents: dict[str, list[str]] = {n: [] for n in names}
    for i, parent, child in edges:
        loc = ("world", "graph", i)
        if parent is None:
            problems.append((loc, f"an edge is written 'parent -> child', got {child!r}"))
            continue
        bad = [n for n in (parent, child) if n not in parents]
        for n in bad:
            problems.append((loc, f"unknown feature {n!r}; expected one of {', '.join(names)}"))
        if bad:
            continue
        if parent == child:
            problems.append((loc, f"a feature cannot cause itself ({parent!r})"))
        elif parent in parents[child]:
            problems.append((loc, f"edge {parent} -> {child} is listed twice"))
        else:
            parents[child].append(parent)
    cycle = find_cycle(parents)
    if cycle:
        problems.append((("world", "graph"), "the graph has a cycle: " + " -> ".join(cycle)))
        return problems
    order = {n: i for i, n in enumerate(names)}
    for child, pa in parents.items():
        for p in pa:
            if order[p] > order[child]:
                problems.append((("features", order[p]), f"{p!r} causes {child!r} "
                                 f"(features[{order[child]}]) but is listed after it; list "
                                 "features in a causal order"))
    return problems


def find_cycle(parents: dict[str, list[str]]) -> list[str]:
    """A directed cycle of the graph (child -> its parents) as [a, b, ..., a], or []."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(n: str) -> list[str]:
        state[n] = 1
        path.append(n)
        for p in parents.get(n, []):
            if state.get(p) == 1:
                loop = path[path.index(p):] + [p]
                return list(reversed(loop))  # read as cause -> effect
            if p not in state:
                found = visit(p)
                if found:
                    return found
        path.pop()
        state[n] = 2
        return []

    for n in parents:
        if n not in state:
            found = visit(n)
            if found:
                return found
    return []


def parent_indices(edges: list[tuple[int, str, str] | tuple[int, None, str]],
                   features: Sequence[Any]) -> dict[int, tuple[int, ...]]:
    """A checked graph's edges as {feature index: sorted parent indices} (every feature of
    ``features``, objects with a ``name``, a key)."""
    index = {f.name: j for j, f in enumerate(features)}
    graph: dict[int, list[int]] = {j: [] for j in range(len(features))}
    for _, parent, child in edges:
        if parent is not None:
            graph[index[child]].append(index[parent])
    return {j: tuple(sorted(p)) for j, p in graph.items()}
