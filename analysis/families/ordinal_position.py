"""The ordinal model with a random intercept per position shown (``ordinal_position``):
the main family's model (analysis.families.ordinal) plus an intercept for the place j_r
(0, 1, 2, ...) a plan had in the participant's sequence, crossed with the participant's,

    P(y_r <= k) = logistic(c_k - eta_r - v_{j_r}),   v_j = sigma_v z_j,
    z_j ~ Normal(0, 1),   sigma_v ~ HalfNormal(1)

(non-centred, like every hierarchical term). Every participant rates at every position,
so the positions are crossed with the participants, not nested in them: v_j is what the
whole sample does at the j-th plan (fatigue, anchoring on the first plan), u_p what one
participant does at every plan. sigma_v -> 0 is the main family's model. Not fitted by
default: ``analyze --family ordinal_position``; its report section shows its smooths,
every coefficient with sigma_v, and each position's intercept v_j.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd

from analysis.families.base import Coefficient, Fitted, Prior, ReportSection
from analysis.families.ordinal import OrdinalFamily
from analysis.model_data import AnalysisDataError, ModelData

COLUMN = "position"  # ratings_long's 0-based position the plan was shown at


class OrdinalPositionFamily(OrdinalFamily):
    """The module docstring's model."""

    name: ClassVar[str] = "ordinal_position"
    title: ClassVar[str] = "Bayesian ordinal model with position intercepts"
    formula: ClassVar[str] = ("P(y_r <= k) = logistic(c_k - eta_r - v_j), eta_r = f(d_r) + "
                              "beta_s s_r + beta_v v_r + gamma_arm + u_p + b_p (d_r - mean d), "
                              "v_j = sigma_v z_j")
    words: ClassVar[str] = ("hierarchical cumulative-logit model of the 7-point {outcome} "
                            "rating on a penalized spline of {distance}{extra}, per-participant "
                            "random intercepts and slopes and a random intercept per position "
                            "shown")
    main: ClassVar[bool] = False
    default: ClassVar[bool] = False
    pointwise_loo: ClassVar[bool] = False
    predictive_check: ClassVar[bool] = False
    variances: ClassVar[tuple[str, ...]] = ("sigma_u", "sigma_b", "sigma_f", "sigma_v")
    own_priors: ClassVar[tuple[Prior, ...]] = OrdinalFamily.own_priors + (
        ("sigma_v", "HalfNormal", (1.0,), "sd of the intercepts per position shown"),
        ("z_v", "Normal", (0.0, 1.0), "standardized intercepts per position shown"))
    report_note: ClassVar[str] = (
        "The ordinal model with a random intercept v_j per position a plan was shown at, "
        "crossed with the participants' (sigma_v: their spread; 0 is no order effect); "
        "smooths on the logit scale, centred, with 95% bands.")

    def positions(self, data: ModelData) -> tuple[np.ndarray, list[int]]:
        """(each rating's position code 0..J-1, the positions) of ``data``."""
        if data.rows is None or COLUMN not in data.rows:
            raise AnalysisDataError(f"the {self.name} model needs the ratings' {COLUMN!r}")
        codes, levels = pd.factorize(data.rows[COLUMN].astype(int), sort=True)
        return codes.astype("int64"), [int(v) for v in levels]

    def coords(self, data: ModelData) -> dict[str, list[Any]]:
        return {**super().coords(data), "position": self.positions(data)[1]}

    def own_arrays(self, data: ModelData, arrays: dict[str, np.ndarray],
                   basis: np.ndarray) -> dict[str, np.ndarray]:
        arrays["position_index"] = self.positions(data)[0]
        return arrays

    def add_effects(self, data: ModelData, x: dict[str, Any], eta: Any) -> Any:
        """eta + v_{j_r}."""
        import pymc as pm

        sigma_v = pm.HalfNormal("sigma_v", 1.0)
        z_v = pm.Normal("z_v", 0.0, 1.0, dims="position")
        v = pm.Deterministic("v", sigma_v * z_v, dims="position")
        return eta + v[x["position_index"]]

    def own_coefficients(self, data: ModelData, posterior: Any) -> list[Coefficient]:
        """v_j per position (group intercept), then the cutpoints."""
        return [Coefficient.of(f"v[{int(j)}]", posterior["v"].sel(position=j).values,
                               "intercept")
                for j in posterior["v"].coords["position"].values
                ] + super().own_coefficients(data, posterior)

    def report_section(self, models: list[Fitted]) -> ReportSection | None:
        """The shared section, then a table of v_j per position and model."""
        from analysis.report_figures import table

        section = super().report_section(models)
        assert section is not None
        rows = [{"outcome": m.outcome, "distance": m.distance, "position": c.name[2:-1],
                 "v (94% interval)": c.interval()}
                for m in models for c in m.coefficients if c.name.startswith("v[")]
        extra = ("<h3>Intercept per position shown</h3>" + table(pd.DataFrame(rows))
                 if rows else "")
        return ReportSection(section.title, section.html + extra, section.note)


FAMILY = OrdinalPositionFamily()
