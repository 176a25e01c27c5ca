"""Table S2 of Tominaga et al. ("Reassessing Evaluation Functions in Algorithmic Recourse:
An Empirical Study from a Human-Centered Perspective", Appendix C): ours from mgcv, theirs
as published, and the paper's three findings checked on ours.

Table S2 has four models (Model-1/2: propensity for acceptance on sparsity / proximity;
Model-3/4: propensity for action on sparsity / proximity), each with four rows: the
Intercept (a fixed effect: coefficient, SE, t value, p value; the model's AIC), the
distance's smooth (EDF, F value, p value), and the participant ("uid") random intercept
(r.i.) and random slope (r.s.) terms (EDF, F, p). Sparsity is our L0, proximity our L1 of
the analysed family (analysis.mgcv fits the models).

The paper's findings (sections 5.1.1, 5.2.1, 6) as checks on our table (alpha = 0.05):

1. acceptance is not associated with distance: both acceptance smooths have p >= 0.05;
2. action is, nonlinearly, and falls with distance: both action smooths have p < 0.05,
   EDF > 1 and a fitted smooth higher at the smallest distance than at the largest;
3. individual differences explain the ratings: both participant terms have p < 0.05 in
   all four models.
"""

from __future__ import annotations

from typing import Any

ALPHA = 0.05
TERMS = ("intercept", "smooth", "participant_intercept", "participant_slope")
TERM_LABELS = {"intercept": "Intercept", "participant_intercept": "uid (r.i.)",
               "participant_slope": "uid (r.s.)"}
VARIABLES = {"l0": "Sparsity", "l1": "Proximity"}
MODELS = (("Model-1", "acceptance", "l0"), ("Model-2", "acceptance", "l1"),
          ("Model-3", "action", "l0"), ("Model-4", "action", "l1"))
BELOW = 0.001  # the paper prints p < 0.001 as "<0.001"


def _p(text: str) -> float | str:
    return text if text.startswith("<") else float(text)


def _paper(coef: tuple[float, float, float], aic: float, smooth: tuple[float, float, str],
           ri: tuple[float, float, str], rs: tuple[float, float, str]) -> dict[str, Any]:
    return {
        "intercept": {"estimate": coef[0], "se": coef[1], "t": coef[2], "p": "<0.001"},
        "aic": aic,
        **{term: {"edf": v[0], "F": v[1], "p": _p(v[2])} for term, v in
           (("smooth", smooth), ("participant_intercept", ri), ("participant_slope", rs))},
    }


# Table S2 as published (p values as printed; "<0.001" stays a string).
PAPER: dict[str, dict[str, Any]] = {
    "Model-1": _paper((3.28, 0.07, 45.60), 5597.44, (1.01, 0.00, "1.000"),
                      (235.35, 9.21, "<0.001"), (142.98, 5.21, "<0.001")),
    "Model-2": _paper((3.29, 0.07, 45.93), 5590.47, (1.00, 0.89, "0.347"),
                      (258.69, 9.40, "<0.001"), (133.20, 4.00, "<0.001")),
    "Model-3": _paper((2.63, 0.07, 38.06), 5261.35, (4.25, 18.46, "<0.001"),
                      (269.32, 10.37, "<0.001"), (99.44, 2.89, "<0.001")),
    "Model-4": _paper((2.63, 0.07, 38.77), 5280.33, (4.32, 20.81, "<0.001"),
                      (288.58, 8.49, "<0.001"), (69.98, 1.13, "0.009")),
}
# The smoothing-parameter method Table S2's reproduction uses: mgcv::gam's default, which the
# reference study's fits got unless they set another (its text names none). The analysis
# house's default is REML (analysis.mgcv).
PAPER_METHOD = "GCV.Cp"
PAPER_N = {"participants": 362, "evaluations": 1810, "excluded": 72, "analysed": 1738}


def model_label(outcome: str, distance: str) -> str | None:
    """"Model-1".."Model-4" for an outcome and an L0 / L1 distance (None otherwise)."""
    kind = distance.split("_", 1)[0]
    return next((m for m, o, k in MODELS if o == outcome and k == kind), None)


def variable(distance: str) -> str:
    return VARIABLES.get(distance.split("_", 1)[0], distance)


def rows(models: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Table S2's rows from analysis.mgcv's model results, in the paper's order: per model
    {model, outcome, distance, variable, smooth (is a smoothing term), coef, se, t, edf, F,
    p, aic} (null where the paper's cell is empty)."""
    out = []
    for m in sorted(models, key=lambda m: model_label(m["outcome"], m["distance"]) or "~"):
        label = model_label(m["outcome"], m["distance"]) or m["name"]
        base = {"model": label, "outcome": m["outcome"], "distance": m["distance"]}
        empty = dict.fromkeys(("coef", "se", "t", "edf", "F", "p", "aic"))
        i = m["intercept"]
        out.append({**base, **empty, "variable": "Intercept", "smooth": False,
                    "coef": i["estimate"], "se": i["se"], "t": i["t"], "p": i["p"],
                    "aic": m["aic"]})
        for term in TERMS[1:]:
            s = m[term]
            name = variable(m["distance"]) if term == "smooth" else TERM_LABELS[term]
            out.append({**base, **empty, "variable": name, "smooth": True, "edf": s["edf"],
                        "F": s["F"], "p": s["p"]})
    return out


def format_p(p: float | str | None) -> str:
    """A p value as the paper prints it (three decimals, "<0.001" below)."""
    if p is None:
        return "-"
    if isinstance(p, str):
        return p
    return "<0.001" if p < BELOW else f"{p:.3f}"


def p_text(p: float | str | None) -> str:
    """"p = 0.347" or "p < 0.001" (for sentences)."""
    text = format_p(p)
    return f"p {text[0]} {text[1:]}" if text.startswith("<") else f"p = {text}"


def significant(p: float | str | None) -> bool | None:
    if p is None:
        return None
    return True if isinstance(p, str) else bool(p < ALPHA)


def beside_paper(models: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per model and term, the paper's and our values: {model, outcome, distance, variable,
    statistic (coef | se | t | edf | F | p | aic), paper, ours} (p as the paper prints it)."""
    out = []
    for m in models:
        label = model_label(m["outcome"], m["distance"])
        if label is None:
            continue
        paper = PAPER[label]
        base = {"model": label, "outcome": m["outcome"], "distance": m["distance"]}
        for term in TERMS:
            name = (TERM_LABELS[term] if term != "smooth" else variable(m["distance"]))
            stats = (("estimate", "coef"), ("se", "se"), ("t", "t"), ("p", "p")) if (
                term == "intercept") else (("edf", "edf"), ("F", "F"), ("p", "p"))
            for key, stat in stats:
                theirs, ours = paper[term][key], m[term][key]
                if stat == "p":
                    theirs, ours = format_p(theirs), format_p(ours)
                out.append({**base, "variable": name, "statistic": stat,
                            "paper": theirs, "ours": ours})
            if term == "intercept":
                out.append({**base, "variable": name, "statistic": "aic",
                            "paper": paper["aic"], "ours": m["aic"]})
    return out


def findings(models: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The paper's three findings (module docstring) on our models: {finding, claim,
    holds (null: a model it needs is missing), detail}."""
    by = {model_label(m["outcome"], m["distance"]): m for m in models}

    def smooth(label: str) -> str:
        s = by[label]["smooth"]
        return f"{label} EDF {s['edf']:.2f}, F = {s['F']:.2f}, {p_text(s['p'])}"

    out = []
    acc, act = ("Model-1", "Model-2"), ("Model-3", "Model-4")
    if all(m in by for m in acc):
        holds = all(not significant(by[m]["smooth"]["p"]) for m in acc)
        out.append({"finding": 1, "claim": "acceptance is not associated with sparsity or "
                    "proximity (both smooths p >= 0.05)", "holds": holds,
                    "detail": "; ".join(smooth(m) for m in acc)})
    else:
        out.append(_missing(1, "acceptance is not associated with distance"))
    if all(m in by for m in act):
        def falls(m: str) -> bool:
            fit = by[m]["curve"]["fit"]
            return bool(fit and fit[0] > fit[-1])

        holds = all(significant(by[m]["smooth"]["p"]) and by[m]["smooth"]["edf"] > 1
                    and falls(m) for m in act)
        out.append({"finding": 2, "claim": "action is associated with sparsity and proximity, "
                    "nonlinearly, falling with distance (both smooths p < 0.05, EDF > 1, "
                    "higher at the smallest distance than at the largest)", "holds": holds,
                    "detail": "; ".join(smooth(m) + (", falls" if falls(m) else
                                                     ", does not fall") for m in act)})
    else:
        out.append(_missing(2, "action is associated with distance"))
    if len(by) == 4 and None not in by:
        parts, holds = [], True
        for label in sorted(by):  # type: ignore[type-var]
            m = by[label]
            for term in ("participant_intercept", "participant_slope"):
                holds &= bool(significant(m[term]["p"]))
                parts.append(f"{label} {TERM_LABELS[term]} {p_text(m[term]['p'])}")
        out.append({"finding": 3, "claim": "individual differences: the participant random "
                    "intercept and slope are significant in all four models", "holds": holds,
                    "detail": "; ".join(parts)})
    else:
        out.append(_missing(3, "individual differences in all four models"))
    return out


def _missing(n: int, claim: str) -> dict[str, Any]:
    return {"finding": n, "claim": claim, "holds": None,
            "detail": "not checked: a model it needs was not fitted"}
