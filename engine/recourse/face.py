"""FACE (Poyiadzi et al., "FACE: Feasible and Actionable Counterfactual Explanations"):
the cheapest path through dense regions of the data to a favourably classified data point.

Nodes are data points (a seeded subsample of ``points`` rows of the recourse role's training
split) in the unit cube (engine.recourse.targets). For a person with factual x and
actionable set A:

- *Immutables.* Only data points that agree with x on every discrete immutable feature are
  nodes (a path never changes sex or race); continuous immutables and every feature outside
  A are held at x's values, so node distances are measured on A only:
  ||u_i - u_j||_A.
- *Graph.* ``mode="knn"``: i -- j when j is among i's k nearest nodes or i among j's;
  ``mode="epsilon"``: when ||u_i - u_j||_A <= epsilon. The factual is joined the same way to
  the nodes (edges out of it only, so no path passes through another person).
- *Density-weighted edges.* FACE weighs an edge by its length and the density along it,
  w_ij = f(p(x_ij)) * ||x_i - x_j||, with f decreasing. We use the k-NN density estimate
  p(x_i) ~ k / (N * V_d * rho_i^d) (rho_i: distance to the k-th nearest node) and
  f(p) = (p / p_med)^(-1/d), which gives

      w_ij = ||u_i - u_j||_A * (rho_i + rho_j) / (2 * median(rho)),

  an edge length in units of distance, longer through sparse regions (the geometric mean
  of f over the two end points replaced by the arithmetic mean of their radii).
- *Candidate targets.* Nodes j whose plan (x with A set to node j, through the world model)
  is favourable with P(favourable) >= ``confidence`` and that are dense enough:
  rho_j <= the ``density`` quantile of rho (1.0: every node).
- *Recourse.* Dijkstra from x (scipy.sparse.csgraph, all people of a group in one call);
  the reachable candidate with the cheapest path. No reachable candidate: a counted
  failure (``found`` False).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import torch
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import dijkstra
from torch import Tensor

from engine.recourse.base import Capabilities, RecourseContext
from engine.recourse.targets import TargetMethod, realize_targets, to_unit

MODES = ("knn", "epsilon")
# Candidate plans judged per chunk (rows through the world model and the classifier).
CHUNK_ROWS = 200_000


class Face(TargetMethod):
    """FACE (module docstring); ``seed`` fixes the node subsample.

    People who share the actionable set and the discrete immutable values share the node
    graph (one distance matrix per group); candidates are judged for the whole group at once.

    Hyper-parameters (HARE Appendix B chooses them to maximize success rate;
    docs/bases.md gives the success rates and the variants measured): ``mode="knn"``,
    ``k=50`` (CARLA's FACE default number of neighbours), ``points=2000``, ``confidence=0.5``,
    ``density=1.0``, ``seed=0``.
    """

    name = "face"
    capabilities = Capabilities()

    def __init__(
        self,
        context: RecourseContext,
        *,
        mode: str = "knn",
        k: int = 50,
        epsilon: float = 0.25,
        points: int = 2000,
        confidence: float = 0.5,
        density: float = 1.0,
        seed: int = 0,
    ) -> None:
        super().__init__(context)
        if mode not in MODES:
            raise ValueError(f"face mode must be one of {', '.join(MODES)}, got {mode!r}")
        if k < 1 or epsilon <= 0 or points < 2 or not 0 < confidence < 1 or not 0 < density <= 1:
            raise ValueError("face needs k >= 1, epsilon > 0, points >= 2, 0 < confidence < 1, "
                             "0 < density <= 1")
        self.mode, self.k, self.epsilon, self.points = mode, k, epsilon, points
        self.confidence, self.density, self.seed = confidence, density, seed

    def nodes(self) -> Tensor:
        """The data points of the graph (model units, seeded subsample)."""
        data = self.context.scenario.dataset["train"][0].to(torch.float64)
        if len(data) <= self.points:
            return data
        gen = torch.Generator().manual_seed(self.seed)
        return data[torch.randperm(len(data), generator=gen)[: self.points]]

    def targets(self, x: Tensor, allowed: Tensor) -> tuple[Tensor, Tensor]:
        ctx = self.context
        nodes = self.nodes()
        scen = ctx.scenario
        fixed = [j for j in scen.immutable if bool(scen.categorical[j])]
        groups: dict[tuple, list[int]] = defaultdict(list)
        for i in range(len(x)):
            groups[(tuple(allowed[i].tolist()), tuple(x[i, fixed].tolist()))].append(i)
        best = x.clone()
        found = torch.zeros(len(x), dtype=torch.bool)
        for (cols, values), rows in groups.items():
            cols_t = torch.tensor(cols, dtype=torch.bool)
            agree = torch.ones(len(nodes), dtype=torch.bool)
            for j, v in zip(fixed, values, strict=True):
                agree &= nodes[:, j] == v
            members = nodes[agree]
            if not bool(cols_t.any()) or len(members) < 2:
                continue  # nothing to change, or no path: counted failures
            idx = torch.tensor(rows)
            t, ok = self._group(x[idx], cols_t, members)
            best[idx], found[idx] = t, ok
        return best, found

    def _group(self, x: Tensor, cols: Tensor, nodes: Tensor) -> tuple[Tensor, Tensor]:
        """(targets, found) for people x (g, d) sharing ``cols`` and the node set."""
        ctx = self.context
        g, m = len(x), len(nodes)
        un, ux = to_unit(ctx, nodes)[:, cols], to_unit(ctx, x)[:, cols]
        dist = torch.cdist(un, un)
        dist_x = torch.cdist(ux, un)
        kk = min(self.k, m - 1)
        near, near_idx = dist.topk(kk + 1, largest=False)  # column 0: the node itself
        rho = near[:, -1]
        near_x, near_x_idx = dist_x.topk(kk, largest=False)
        rho_x = near_x[:, -1]
        if self.mode == "knn":
            adj = torch.zeros(m, m, dtype=torch.bool)
            adj[torch.arange(m)[:, None], near_idx[:, 1:]] = True
            adj |= adj.T.clone()
            adj_x = torch.zeros(g, m, dtype=torch.bool)
            adj_x[torch.arange(g)[:, None], near_x_idx] = True
        else:
            adj = dist <= self.epsilon
            adj.fill_diagonal_(False)
            adj_x = dist_x <= self.epsilon
        scale = 2.0 * rho.median().clamp(min=1e-12)
        w = dist * (rho[:, None] + rho[None, :]) / scale
        w_x = dist_x * (rho_x[:, None] + rho[None, :]) / scale
        r, c = adj.nonzero(as_tuple=True)
        rx, cx = adj_x.nonzero(as_tuple=True)
        rows = np.concatenate([r.numpy(), rx.numpy() + m])
        columns = np.concatenate([c.numpy(), cx.numpy()])
        # a tiny floor keeps zero-length edges (duplicate points) in the sparse graph
        weights = np.concatenate([w[r, c].numpy(), w_x[rx, cx].numpy()]) + 1e-12
        graph = coo_matrix((weights, (rows, columns)), shape=(m + g, m + g)).tocsr()
        cost = dijkstra(graph, directed=True, indices=np.arange(m, m + g))[:, :m]
        cost = torch.from_numpy(cost)
        dense = rho <= torch.quantile(rho, self.density)
        ok = self._candidates(x, cols, nodes) & dense[None, :] & torch.isfinite(cost)
        cost = torch.where(ok, cost, torch.full_like(cost, float("inf")))
        j = cost.argmin(dim=1)
        return nodes[j], ok.any(dim=1)

    def _candidates(self, x: Tensor, cols: Tensor, nodes: Tensor) -> Tensor:
        """(g, m) bool: node j's plan for person i acts and is favourable with
        P >= confidence (judged in chunks of people)."""
        ctx = self.context
        g, m = len(x), len(nodes)
        out = torch.zeros(g, m, dtype=torch.bool)
        step = max(1, CHUNK_ROWS // m)
        for a in range(0, g, step):
            xs = x[a : a + step]
            rep = xs.repeat_interleave(m, dim=0)
            allowed = cols[None, :].expand(len(rep), -1)
            r = realize_targets(ctx, rep, nodes.repeat(len(xs), 1), allowed)
            with torch.no_grad():
                p = ctx.classifier.predict_proba(r.x_cf.float()).reshape(-1).double()
            out[a : a + step] = ((p >= self.confidence) & r.action_mask.any(dim=1)).reshape(
                len(xs), m)
        return out
