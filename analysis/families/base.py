"""What every analysis model family is: ``ModelFamily`` and the typed pieces of its results.

All families share one linear predictor of rating r of participant p (non-centred):

    eta_r = f(d_r) + beta_s s_r + beta_v v_r + gamma_{a_r} + u_p + [participant deviation]
    f(d)  = B_c(d) beta,  beta_1 = 0,  beta_k = beta_{k-1} + delta_k,  delta_k = sigma_f z_k
    u_p   = sigma_u z_p

with priors sigma_f ~ HalfNormal(1), z ~ Normal(0, 1), beta_s, beta_v ~ Normal(0, 1.5), gamma
(every arm but the first) ~ Normal(0, 1), sigma_u ~ HalfNormal(2). A family says what the
participant's deviation is (``participant_deviation``: by default a random slope
b_p (d_r - mean d), b_p = sigma_b w_p, sigma_b ~ HalfNormal(1)), which further effects it adds
(``add_effects``) and how the rating is observed given eta (``observe``). eta is one fused
operation (analysis.predictor: the design X = [B_c(d), s, v] times w = (beta_f, beta), plus
the arm, intercept and slope effects), so the graph holds no other pass over the ratings.

A family also owns what follows from its model: the arrays it is built from
(``model_arrays``; with ``shared`` they are named data containers a compiled model can swap,
analysis.refit), its coefficients (``coefficients``, typed ``Coefficient``), its report
section and whether (and how) its smooth is read on the rating scale against a simulated
study's truth (``expected_rating``). PyMC is imported when a model is built, not before.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

import numpy as np
import pandas as pd

from analysis.model_data import ModelData

if TYPE_CHECKING:
    import pymc as pm

HDI = 0.94  # central coefficient intervals (ArviZ's default level)
Group = Literal["effect", "arm", "variance", "cutpoint", "intercept"]
# (PyMC name, distribution, parameters, what it is): a prior as a preregistration states it
Prior = tuple[str, str, tuple[float, ...], str]
SHARED_PRIORS: tuple[Prior, ...] = (
    ("sigma_f", "HalfNormal", (1.0,), "random-walk scale of the smooth f of the distance"),
    ("z_f", "Normal", (0.0, 1.0), "standardized increments of f"),
    ("beta", "Normal", (0.0, 1.5), "satisfaction and violation coefficients"),
    ("gamma_raw", "Normal", (0.0, 1.0), "arm effects (all arms but the first)"),
    ("sigma_u", "HalfNormal", (2.0,), "participants' random intercepts' sd"),
    ("z_u", "Normal", (0.0, 1.0), "standardized random intercepts"),
)


@dataclass(frozen=True)
class Coefficient:
    """One interpretable parameter: its posterior mean and central 94% interval; ``group``
    is effect (satisfaction, violation), arm (a contrast with the first arm), variance,
    cutpoint (ordinal: c_1 < ... < c_6) or intercept (Gaussian: alpha).

    >>> from analysis import Coefficient
    >>> c = Coefficient.of("sigma_u", [0.8, 1.0, 1.2], "variance")
    >>> c.mean, c.interval()
    (1.0, '1.00 [0.81, 1.19]')
    """

    name: str
    group: Group
    mean: float
    lo: float
    hi: float

    @classmethod
    def of(cls, name: str, values: Any, group: Group) -> Coefficient:
        """The summary of posterior draws ``values`` (any shape)."""
        lo, hi = np.quantile(np.asarray(values), [(1 - HDI) / 2, 1 - (1 - HDI) / 2])
        return cls(name, group, float(np.mean(values)), float(lo), float(hi))

    def as_dict(self) -> dict[str, Any]:
        """summary.json's form: {name, group, mean, lo, hi}."""
        return asdict(self)

    def interval(self) -> str:
        """``mean [lo, hi]`` with two decimals."""
        return f"{self.mean:.2f} [{self.lo:.2f}, {self.hi:.2f}]"


@dataclass(frozen=True)
class ReportSection:
    """A section of the report: its title, its HTML and the note under it."""

    title: str
    html: str
    note: str = ""


class Fitted(Protocol):
    """What a family reads of one fitted model (analysis.results.ModelResult)."""

    @property
    def outcome(self) -> str: ...
    @property
    def distance(self) -> str: ...
    data: ModelData
    smooth: pd.DataFrame
    coefficients: list[Coefficient]


class ModelFamily:
    """One family of analysis models (module docstring); subclasses set the class
    attributes and ``observe``/``observed``, and override the hooks they change.

    ``name`` is the catalogue key (analysis.families.FAMILIES), stored in summaries as a
    model's ``likelihood``; ``main``: the family the report's main sections, the LOO
    comparison, intention to treat and the pilot fit use (one family); ``default``: fitted
    by ``analyze`` unless asked otherwise; ``scale``: logit (latent) or rating;
    ``pointwise_loo`` and ``predictive_check``: its models (the main distance's, for the check) compute the
    pointwise log-likelihood and the posterior predictive check; ``matches_mgcv``: the
    Bayesian twin of the reference study's mgcv GAMM (analysis.engines); ``low_rank_mass``:
    nutpie adapts a low-rank mass matrix for it (analysis.fit.start_nutpie: for a few
    correlated parameters, not for hundreds of random effects); ``variances``: its
    variance components, in the order they are summarized; ``deviation_priors`` and
    ``own_priors``: the priors of its participant deviation and of its own parameters.

    >>> from analysis import FAMILIES
    >>> gamm = FAMILIES["gamm"]
    >>> gamm.scale, gamm.variances, [p[0] for p in gamm.priors()][-4:]
    ('rating', ('sigma_u', 'sigma_f', 'sigma_y'), ['sigma_s', 'w_s', 'alpha', 'sigma_y'])
    """

    name: ClassVar[str]
    title: ClassVar[str]
    formula: ClassVar[str]
    words: ClassVar[str]  # "{outcome}", "{distance}", "{extra}" filled in by ``describe``
    scale: ClassVar[Literal["logit", "rating"]]
    main: ClassVar[bool] = False
    default: ClassVar[bool] = False
    pointwise_loo: ClassVar[bool] = False
    predictive_check: ClassVar[bool] = False
    matches_mgcv: ClassVar[bool] = False
    low_rank_mass: ClassVar[bool] = False
    variances: ClassVar[tuple[str, ...]] = ("sigma_u", "sigma_b", "sigma_f")
    deviation_priors: ClassVar[tuple[Prior, ...]] = (
        ("sigma_b", "HalfNormal", (1.0,), "participants' random slopes' sd (ordinal)"),
        ("z_b", "Normal", (0.0, 1.0), "standardized random slopes (ordinal)"))
    own_priors: ClassVar[tuple[Prior, ...]] = ()
    # priors of random effects the likelihood integrates out (stated, but not sampled)
    integrated: ClassVar[tuple[str, ...]] = ()
    # modules of this package (beside the shared ones) whose operations its likelihood uses:
    # part of a fit's fingerprint (analysis.folder)
    kernels: ClassVar[tuple[str, ...]] = ()
    report_note: ClassVar[str] = ""
    section_title: ClassVar[str] = ""  # the report section's title (default: ``title``)

    def __repr__(self) -> str:
        return f"<model family {self.name!r}>"

    # -- the model ---------------------------------------------------------------------
    def model_arrays(self, data: ModelData) -> dict[str, np.ndarray]:
        """The arrays ``build`` puts into the model, by name, each one the model uses and no
        other (nutpie's compiled model knows only those)."""
        assert data.basis is not None
        basis = data.basis(data.d)
        # the dense part of the linear predictor by columns (analysis.predictor): the spline
        # basis functions, then the terms
        columns = np.vstack([basis.T, *(data.terms[t] for t in data.terms)])
        arrays = {"design_columns": columns,
                  "participant_index": data.participant.astype("int64"),
                  "d_centred": data.d - data.d_centre}
        if len(data.arms) > 1:  # one arm: no arm effect, so no arm index in the model
            arrays["arm_index"] = data.arm.astype("int64")
        arrays = self.own_arrays(data, arrays, basis)
        arrays["y_observed"] = self.observed(data)
        return arrays

    def own_arrays(self, data: ModelData, arrays: dict[str, np.ndarray],
                   basis: np.ndarray) -> dict[str, np.ndarray]:
        """The family's changes to the shared arrays (``basis``: B_c(d) of every rating)."""
        return arrays

    def observed(self, data: ModelData) -> np.ndarray:
        """The ratings as the likelihood takes them."""
        raise NotImplementedError

    def coords(self, data: ModelData) -> dict[str, list[Any]]:
        assert data.basis is not None
        return {"participant": data.participants, "arm": data.arms,
                "knot": list(range(1, data.basis.k)), "term": list(data.terms)}

    def build(self, data: ModelData, *, keep_probabilities: bool = False,
              shared: bool = False) -> pm.Model:
        """The PyMC model of ``data`` (``shared``: data as named containers, analysis.refit;
        ``keep_probabilities``: the ordinal family's per-rating category probabilities)."""
        import pymc as pm
        import pytensor.tensor as pt

        arrays = self.model_arrays(data)
        with pm.Model(coords=self.coords(data)) as model:
            x = {name: pm.Data(name, a) if shared else pt.as_tensor_variable(a)
                 for name, a in arrays.items()}
            sigma_f = pm.HalfNormal("sigma_f", 1.0)
            z_f = pm.Normal("z_f", 0.0, 1.0, dims="knot")
            delta_f = pm.Deterministic("delta_f", sigma_f * z_f, dims="knot")
            w_parts = [pt.zeros(1), pt.cumsum(delta_f)]  # beta_f, then beta (the columns)
            if data.terms:
                w_parts.append(pm.Normal("beta", 0.0, 1.5, dims="term"))
            if len(data.arms) > 1:
                g = pm.Normal("gamma_raw", 0.0, 1.0, shape=len(data.arms) - 1)
                gamma = pm.Deterministic("gamma", pt.concatenate([pt.zeros(1), g]), dims="arm")
                arm = x["arm_index"]
            else:  # one arm: its effect is the cutpoints' / alpha's
                gamma, arm = pt.zeros(1), pt.zeros_like(x["participant_index"])
            self.likelihood(data, x, pt.concatenate(w_parts), arm, gamma, keep_probabilities)
        return model

    def likelihood(self, data: ModelData, x: dict[str, Any], w: Any, arm: Any, gamma: Any,
                   keep_probabilities: bool) -> None:
        """The participants' effects and the likelihood, given the fixed effects ``w`` (the
        design's coefficients) and the arm effects ``gamma``: by default the random
        intercepts u_p = sigma_u z_p, the family's deviation (``participant_deviation``,
        ``add_effects``) and ``observe``, every random effect a sampled parameter."""
        import pymc as pm

        from analysis.predictor import linear_predictor

        sigma_u = pm.HalfNormal("sigma_u", 2.0)
        centred, mean = random_intercepts(len(data.participants))
        slope, d = self.participant_deviation(data, x)
        eta = linear_predictor(x["design_columns"], w, arm, gamma, x["participant_index"],
                               sigma_u * centred, slope, d)
        eta = self.add_effects(data, x, eta)
        self.observe(data, x, eta, keep_probabilities, shift=sigma_u * mean)

    def participant_deviation(self, data: ModelData, x: dict[str, Any]) -> tuple[Any, Any]:
        """(slope per participant, the distance it multiplies): b_p = sigma_b w_p on the
        centred distance."""
        import pymc as pm

        sigma_b = pm.HalfNormal("sigma_b", 1.0)
        z_b = pm.Normal("z_b", 0.0, 1.0, dims="participant")
        return sigma_b * z_b, x["d_centred"]

    def add_effects(self, data: ModelData, x: dict[str, Any], eta: Any) -> Any:
        """eta with the family's further effects (none by default)."""
        return eta

    def observe(self, data: ModelData, x: dict[str, Any], eta: Any,
                keep_probabilities: bool, shift: Any) -> None:
        """The likelihood of ``x["y_observed"]`` given ``eta``, as the observed RV ``y``;
        ``eta`` lacks the constant ``shift`` = sigma_u mean(z_u), which the family's level
        (its first cutpoint) absorbs (``random_intercepts``)."""
        raise NotImplementedError

    def integrated_draws(self, data: ModelData, posterior: Any, seed: int
                         ) -> dict[str, Any]:
        """Draws of the random effects named in ``integrated``, one per posterior draw
        (xarray DataArrays by name; none for a family that samples them)."""
        return {}

    def priors(self) -> tuple[Prior, ...]:
        """Every parameter's prior: the free parameters' and those of the random effects
        named in ``integrated`` (checked against the built model by the tests)."""
        return SHARED_PRIORS + self.deviation_priors + self.own_priors

    # -- its results -------------------------------------------------------------------
    def coefficients(self, data: ModelData, posterior: Any) -> list[Coefficient]:
        """Every interpretable parameter of a posterior (xarray Dataset): the effects, the
        arm contrasts, ``variances``, then the family's own (``own_coefficients``)."""
        out = []
        if "beta" in posterior:
            out += [Coefficient.of(t, posterior["beta"].sel(term=t).values, "effect")
                    for t in data.terms]
        if "gamma" in posterior:
            out += [Coefficient.of(f"arm[{a}] - arm[{data.arms[0]}]",
                                   posterior["gamma"].sel(arm=a).values, "arm")
                    for a in data.arms[1:]]
        out += [Coefficient.of(v, posterior[v].values, "variance") for v in self.variances]
        return out + self.own_coefficients(data, posterior)

    def own_coefficients(self, data: ModelData, posterior: Any) -> list[Coefficient]:
        return []

    def expected_rating(self, model: Fitted, latent: np.ndarray) -> np.ndarray | None:
        """The typical participant's mean rating at latent values ``latent`` of the fitted
        smooth (analysis.truth); None: this family's smooth is not compared with a truth."""
        return None

    def describe(self, outcome: str, distance: str, extra: str) -> str:
        """The model in words (a preregistration's analysis plan)."""
        return self.words.format(outcome=outcome, distance=distance, extra=extra)

    def report_section(self, models: list[Fitted]) -> ReportSection | None:
        """The family's section of the report: its smooths and every coefficient of its
        models (None for the main family: the report's main sections are its)."""
        from analysis.report_figures import smooth_figure, table

        if self.main:
            return None
        title = self.section_title or self.title
        if not models:
            return ReportSection(title, "<p>Not fitted.</p>", self.report_note)
        rows = pd.DataFrame([{"outcome": m.outcome, "distance": m.distance,
                              **{c.name: c.interval() for c in m.coefficients}}
                             for m in models])
        return ReportSection(title, smooth_figure(models, self.scale) + table(rows),
                             self.report_note)


# a stated parameter sampled as other free parameters (``random_intercepts``; the ordinal
# family's c_1): the stated one is kept as a deterministic of the same name, and it, not
# its pieces, is what the convergence diagnostics read (analysis.fit.free_names)
SAMPLED_AS: dict[str, tuple[str, ...]] = {"z_u": ("z_u_centred", "z_u_mean"),
                                         "cut_first": ("cut_level",)}


def random_intercepts(participants: int) -> tuple[Any, Any]:
    """The standardized random intercepts z_u ~ Normal(0, 1), iid over the P participants,
    sampled as their mean and their deviations from it, which are independent:

        z_u = zbar + z~,   zbar ~ Normal(0, 1 / sqrt(P)),   z~ ~ ZeroSumNormal(1)

    (the same distribution: an orthogonal split of iid standard normals into the direction
    (1, ..., 1) and the rest). The likelihood depends on the first cutpoint c_1 and zbar only
    through c_1 - sigma_u zbar, a ridge the sampler crosses slowly while zbar is spread over
    every z_u; sampling zbar apart and c_1 relative to it (``ModelFamily.observe``'s
    ``shift``) removes the ridge and leaves the posterior as it was. Returns (z~, zbar);
    ``z_u`` is kept as a deterministic."""
    import pymc as pm

    centred = pm.ZeroSumNormal("z_u_centred", 1.0, dims="participant")
    mean = pm.Normal("z_u_mean", 0.0, 1.0 / np.sqrt(participants))
    pm.Deterministic("z_u", centred + mean, dims="participant")
    return centred, mean
