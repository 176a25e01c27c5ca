"""The self-contained HTML report of ``recourse-study analyze`` (figures embedded as PNG).

Sections: what the study recorded (and what it did not), the smooth of each rating against
L0 and against L1 with 95% bands (the reference study's Figure 3, on the latent logit
scale, centred: 0 is the average plan), coefficients with 94% intervals, variance
components, posterior predictive check (observed rating shares against the replicated
ones), rating distributions by arm, recourse metrics by arm, LOO comparison (these of the
main model family), the section of every other family fitted (``ModelFamily.report_section``:
the Gaussian GAMM by default), the reference study's own Figure 1, Table S2 and Figure 3
from mgcv (analysis.report_reference) and
sampling diagnostics; with a preregistration (``analyze --prereg``), first its deviations
(analysis.deviations). It renders every study the store can hold: a section whose data a study did
not record (imported plans: no validity, plausibility, cost or method; one arm; no
satisfaction or violation) says "not recorded" for it, and a model that failed leaves a
"not fitted" note where its figure would be.
"""

from __future__ import annotations

import html

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis import report_reference as reference
from analysis.families import FAMILIES, ReportSection
from analysis.pipeline import Analysis
from analysis.report_figures import LABELS, NOT_RECORDED, smooth_figure
from analysis.report_figures import png as _png
from analysis.report_figures import table as _table
from analysis.results import ModelResult
from analysis.tables import participants_by_kind, recorded, recourse_table


def coefficient_figure(models: list[ModelResult], group: str) -> str:
    """The ``group`` (effects: effect and arm; variance) coefficients of the main
    distance's models of the main family."""
    main = _main(models)
    groups = ("effect", "arm") if group == "effects" else ("variance",)
    rows = [(f"{m.outcome}: {c.name}", c) for m in models
            if m.family.main and m.distance == main for c in m.coefficients if c.group in groups]
    if not rows:
        return ""
    fig, ax = plt.subplots(figsize=(7, 0.4 * len(rows) + 1))
    y = np.arange(len(rows))
    ax.errorbar([c.mean for _, c in rows], y,
                xerr=[[max(c.mean - c.lo, 0) for _, c in rows],
                      [max(c.hi - c.mean, 0) for _, c in rows]],
                fmt="o", capsize=3)
    ax.set_yticks(y, [n for n, _ in rows])
    ax.axvline(0, color="grey", lw=1, ls="--")
    ax.set_xlabel("posterior mean and 94% interval (logit scale)")
    ax.invert_yaxis()
    fig.tight_layout()
    return _png(fig)


def effects_notes(analysis: Analysis) -> str:
    """Which effects could not be estimated, and why (not recorded, constant, one arm)."""
    rec = recorded(analysis.ratings, analysis.plans)
    terms = {t for m in analysis.models for t in m.data.terms}
    notes = []
    for term in ("satisfaction", "violation"):
        if not rec[term]:
            notes.append(f"{term}: {NOT_RECORDED}")
        elif term not in terms:
            notes.append(f"{term}: recorded but constant, so no effect can be estimated")
    arms = {a for m in analysis.models for a in m.data.arms}
    if len(arms) <= 1:
        notes.append("arm contrasts: " + (f"one arm ({next(iter(arms))})" if rec["arm"]
                                           else f"arm {NOT_RECORDED}") + ", nothing to compare")
    return "".join(f"<p>{html.escape(n)}</p>" for n in notes)


def ppc_figure(models: list[ModelResult]) -> str:
    with_pp = [m for m in models if m.ppc]
    if not with_pp:
        return "<p>Not computed (the main-distance ordinal models were not fitted).</p>"
    fig, axes = plt.subplots(1, len(with_pp), figsize=(5 * len(with_pp), 3.2), squeeze=False)
    for ax, m in zip(axes[0], with_pp, strict=True):
        t = pd.DataFrame(m.ppc)
        ax.bar(t["rating"], t["observed"], color="#9ecae1", label="observed")
        ax.errorbar(t["rating"], t["mean"], yerr=[t["mean"] - t["lo"], t["hi"] - t["mean"]],
                    fmt="o", color="k", capsize=3, label="replicated (95%)")
        ax.set_xticks(t["rating"])
        ax.set_xlabel(f"{m.outcome} rating")
        ax.set_ylabel("share")
        ax.set_title(f"{m.outcome} ~ s({m.distance})")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return _png(fig)


def arm_figure(ratings: pd.DataFrame) -> str:
    arm = ratings["arm"] if "arm" in ratings else pd.Series(None, index=ratings.index)
    arm = arm.fillna(f"(arm {NOT_RECORDED})").astype(str)
    arms = sorted(arm.unique())
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.2))
    k = np.arange(1, 8)
    width = 0.8 / max(len(arms), 1)
    for ax, outcome in zip(axes, ("acceptance", "action"), strict=True):
        for i, a in enumerate(arms):
            v = ratings.loc[arm == a, outcome]
            share = [(v == x).mean() for x in k]
            ax.bar(k + (i - (len(arms) - 1) / 2) * width, share, width, label=f"{a} (n={len(v)})")
        ax.set_xticks(k)
        ax.set_xlabel(f"{outcome} rating (1 = strongly disagree, 7 = strongly agree)")
        ax.set_ylabel("share")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return _png(fig)


def recorded_table(analysis: Analysis) -> str:
    """What the study holds: each optional field recorded or not, participants by kind."""
    rec = recorded(analysis.ratings, analysis.plans)
    fields = pd.DataFrame([{"field": k, "status": f"recorded ({n} rows)" if n else NOT_RECORDED}
                           for k, n in rec.items()])
    kinds = pd.DataFrame([{"participant kind": k, "participants": n}
                          for k, n in participants_by_kind(analysis.ratings).items()])
    return _table(fields) + ("<h3>Participants by kind</h3>" + _table(kinds)
                             if not kinds.empty else "")


def recourse_section(analysis: Analysis) -> str:
    table = recourse_table(analysis.plans)
    if table.empty:
        return f"<p>Plans {NOT_RECORDED}.</p>"
    missing = [c for c in table.columns[3:] if table[c].isna().all()]
    note = (f"<p>{NOT_RECORDED.capitalize()} in this study: {html.escape(', '.join(missing))}"
            ".</p>") if missing else ""
    return _table(table) + note


def loo_section(analysis: Analysis) -> str:
    parts = []
    for outcome in sorted({s.outcome for s in analysis.specs}):
        rows = analysis.loo.get(outcome)
        parts.append(f"<h3>{html.escape(outcome)}</h3>" + (
            _table(pd.DataFrame(rows)) if rows else
            "<p>Not computed: it needs both ordinal models of this outcome.</p>"))
    return "".join(parts)


def truth_section(analysis: Analysis) -> str:
    """Truth vs recovered (analysis.truth): the curves and the verdicts."""
    found = analysis.truth_vs_recovered()
    if found is None:
        return ""
    rows = found["outcomes"]
    fig, axes = plt.subplots(1, len(rows), figsize=(5 * len(rows), 3.4), squeeze=False)
    for ax, r in zip(axes[0], rows, strict=True):
        c = pd.DataFrame(r["curve"])
        ax.fill_between(c["d"], c["lo"], c["hi"], alpha=0.3, label="recovered 95% band")
        ax.plot(c["d"], c["mean"], lw=2, label="recovered")
        ax.plot(c["d"], c["truth"], "k--", lw=2, label="truth")
        ax.set_ylim(1, 7)
        ax.set_xlabel(LABELS.get(found["distance"], found["distance"]))
        ax.set_ylabel(f"mean {r['outcome']} rating (typical participant)")
        ax.set_title(f"{r['outcome'].capitalize()}: truth {r['truth_shape']}, "
                     f"{'recovered' if r['recovered'] else 'NOT recovered'}")
    axes[0][0].legend(loc="best", fontsize=8)
    fig.tight_layout()
    table = pd.DataFrame([{
        "outcome": r["outcome"], "truth": r["truth_shape"],
        "true change (d_min - d_max)": r["true_change"],
        "recovered change": r["recovered_change"],
        "recovered": "yes" if r["recovered"] else "no",
        **{f"{e['term']} (truth / recovered)":
           f"{e['truth']:.2f} / {e['mean']:.2f} [{e['lo']:.2f}, {e['hi']:.2f}]"
           for e in r["effects"]}} for r in rows])
    return _png(fig) + _table(table, 2)


def exclusions_section(analysis: Analysis) -> str:
    ex = analysis.exclusions
    if not ex:
        return "<p>No exclusions were applied.</p>"
    rules = ", ".join(k for k, on in ex["rules"].items() if on) or "none"
    counts = ", ".join(f"{k}: {v}" for k, v in ex["counts"].items())
    dropped = ", ".join(f"{k}: {v}" for k, v in ex.get("ratings_excluded", {}).items())
    kept = (f" Ratings analysed: {ex['n_ratings_kept']} of {ex['n_ratings_before']} "
            f"(left out by rule: {html.escape(dropped)})." if "n_ratings_kept" in ex else "")
    text = (f"<p>Rules (the protocol's <code>exclusions</code>): {html.escape(rules)}. "
            f"Participants excluded: {html.escape(counts)}.{kept} They stay in the database "
            "and the export.</p>")
    if ex.get("by_arm"):
        table = pd.DataFrame([{"arm": r["arm"], "ratings": r["ratings"],
                               "excluded": r["excluded"], "excluded (%)": r["rate"],
                               "participants": r["participants"],
                               "participants with no rating left": r["participants_excluded"]}
                              for r in ex["by_arm"]])
        text += "<p>Per arm:</p>" + _table(table, 1)
    if ex.get("uneven"):
        text += ("<div class='warn'><p><b>The exclusions hit the arms unevenly</b> (more than "
                 "10 points apart): the ratings left out are not missing at random, so the "
                 "per-protocol fit may compare the arms on different people. The main model "
                 "is also fitted on every rating (intention to treat), below.</p></div>")
    return text + intention_to_treat_section(analysis)


def intention_to_treat_section(analysis: Analysis) -> str:
    """The main model of each outcome, per protocol (after the exclusions) beside intention
    to treat (every rating): each effect, arm contrast and variance with its 94% interval."""
    if analysis.itt_ratings is None:
        return ""
    rows = []
    for itt in analysis.itt:
        per_protocol = next((m for m in analysis.models if m.spec.name == itt.spec.name), None)
        pp = {c.name: c for c in per_protocol.coefficients} if per_protocol else {}
        for c in itt.coefficients:
            if c.group not in ("effect", "arm", "variance"):
                continue
            mine = pp.get(c.name)
            rows.append({"outcome": itt.outcome, "term": c.name,
                         "per protocol": mine.interval() if mine else NOT_RECORDED,
                         "intention to treat": c.interval()})
    failed = "".join(f"<p>Not fitted on every rating: {html.escape(f['model'])}: "
                     f"{html.escape(f['error'])}</p>" for f in analysis.itt_failed)
    head = (f"<p>Intention to treat: {len(analysis.itt_ratings)} ratings of "
            f"{analysis.itt_ratings['participant_id'].nunique()} participants (none "
            f"excluded), against {len(analysis.ratings)} per protocol.</p>")
    return head + (_table(pd.DataFrame(rows)) if rows else "") + failed


def deviations_section(analysis: Analysis) -> str:
    """The departures from the preregistration (analysis.deviations), or "no deviations"."""
    dev = analysis.deviations
    if dev["none"]:
        return "<p>No deviations from the preregistration.</p>"
    return (f"<p>{html.escape(dev['sentence'])}:</p><ul>"
            + "".join(f"<li>{html.escape(i['sentence'])}</li>" for i in dev["items"])
            + "</ul>")


def family_sections(analysis: Analysis) -> list[tuple[str, str, str]]:
    """The section of every family but the main one that the analysis planned or fitted
    (``ModelFamily.report_section``), in the catalogue's order."""
    planned = {s.family for s in analysis.specs} | {m.family for m in analysis.models}
    sections: list[ReportSection] = []
    for family in FAMILIES.values():
        section = family.report_section([m for m in analysis.models if m.family is family]
                                        ) if family in planned else None
        if section is not None:
            sections.append(section)
    return [(s.title, s.html, s.note) for s in sections]


def _main(models: list[ModelResult]) -> str:
    with_pp = [m for m in models if m.ppc]
    return with_pp[0].distance if with_pp else (models[0].distance if models else "")


def _family(analysis: Analysis) -> tuple[str, str]:
    """(L0, L1) of the analysed distance family (the profile's without models)."""
    scope = (analysis.specs[0].distance if analysis.specs else "l1_profile").split("_", 1)[1]
    return f"l0_{scope}", f"l1_{scope}"


def _status(analysis: Analysis) -> str:
    if analysis.complete:
        return ""
    items = [f"{f['model']}: {f['error']}" for f in analysis.failed]
    items += [f"{name}: not fitted yet" for name in analysis.pending]
    return ("<div class='warn'><p><b>Incomplete analysis.</b> These models have no result; "
            "rerun <code>recourse-study analyze ... --resume</code> to fit only them:</p><ul>"
            + "".join(f"<li>{html.escape(i)}</li>" for i in items) + "</ul></div>")


def render(analysis: Analysis) -> str:
    """The whole report as one HTML document."""
    models = analysis.models
    diag = pd.DataFrame([{
        "outcome": m.outcome, "distance": m.distance, "likelihood": m.likelihood,
        "max R-hat": m.diagnostics.max_rhat, "min bulk ESS": m.diagnostics.min_ess_bulk,
        "min tail ESS": m.diagnostics.min_ess_tail, "divergences": m.diagnostics.divergences,
        "drawn": m.diagnostics.drawn() or "not recorded", "seconds": m.seconds,
        "reused": "yes" if m.reused else "no",
        "warnings": "; ".join(m.diagnostics.problems()) or "none",
    } for m in models])
    n_p = analysis.ratings["participant_id"].nunique()
    truth = truth_section(analysis)
    sections = [
        *([("Deviations", deviations_section(analysis),
            f"Against the preregistration of protocol "
            f"{analysis.deviations['prereg_protocol']['id']} (recourse-study prereg).")]
          if analysis.deviations else []),
        ("Exclusions", exclusions_section(analysis), ""),
        *([("Languages", f"<p>{html.escape(analysis.languages['sentence'])}</p>", "")]
          if analysis.languages else []),
        ("Distances of the shown plans (the reference study's Figure 1)",
         reference.distance_figure(analysis.plans, _family(analysis), _png),
         "Sparsity (L0) and proximity (L1) of every plan shown, per arm."),
        ("Data recorded", recorded_table(analysis),
         "Optional fields of the plans and ratings; a field not recorded is left out of the "
         "models and tables below."),
        ("Smooths of the ratings against distance",
         smooth_figure([m for m in models if m.family.main]),
         "Centred smooth f(d) on the latent (logit) scale with 95% bands; 0 is the average "
         "plan. A band containing 0 everywhere means no evidence that distance matters."),
        *([("Truth vs recovered (simulated study)", truth,
             "Mean rating of the typical participant (random effects 0) for a plan meeting "
             "no stated preference: the behaviour the synthetic participants were given "
             "(dashed) against what the ordinal model recovered (smooth through the fitted "
             "cutpoints, 95% band). Effects on the latent scale with 94% intervals.")]
           if truth else []),
        ("Effects (94% intervals)",
         coefficient_figure(models, "effects") + effects_notes(analysis),
         "Preference satisfaction, violation of the stated constraints and arm contrasts."),
        ("Variance components", coefficient_figure(models, "variance") or "<p>Not fitted.</p>",
         "sigma_u: participant intercepts; sigma_b: participant slopes on distance; sigma_f: "
         "smoothness of the distance curve; sigma_s[k]: the GAMM's random smooths."),
        ("Posterior predictive check", ppc_figure(models),
         "Observed shares of each rating against replicated data from the fitted model."),
        ("Ratings by arm", arm_figure(analysis.ratings), ""),
        ("Recourse metrics by arm", recourse_section(analysis),
         "From the stored plans (engine.metrics definitions)."),
        ("Model comparison (PSIS-LOO, ordinal models)", loo_section(analysis),
         "Per outcome: the model with L0 against the one with L1 (higher elpd is better)."),
        *family_sections(analysis),
        ("mgcv: the reference study's GAMMs (Table S2, Figure 3)",
         reference.mgcv_section(analysis.mgcv, analysis.ratings, _png, _table),
         "The reference study's own statistics: ratings as continuous, y ~ s(d) + "
         "s(participant, bs='re') + s(participant, d, bs='re') in R's mgcv, after the same "
         "exclusions; the smooth is centred, on the rating scale, with 95% intervals. "
         "Then, per model, where mgcv and the Bayesian models agree or differ."),
        ("Sampling diagnostics", _table(diag) if not diag.empty else "<p>No model fitted.</p>",
         "Thresholds: R-hat <= 1.01, ESS >= 400, no divergent transitions."),
    ]
    body = "".join(
        f"<section><h2>{html.escape(t)}</h2>{content}"
        + (f"<p class='note'>{html.escape(note)}</p>" if note else "") + "</section>"
        for t, content, note in sections)
    title = f"Analysis of {html.escape(str(analysis.study_id))}"
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{title}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#222}} img{{max-width:100%}} table.t{{border-collapse:collapse;font-size:.9em}}
table.t td,table.t th{{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:right}}
.note{{color:#555;font-size:.9em}} section{{margin-bottom:2.5em}}
.warn{{background:#fff4e5;border-left:4px solid #e69500;padding:.5em 1em}}</style></head><body>
<h1>{title}</h1><p>{len(analysis.ratings)} ratings from {n_p} participants.</p>
{_status(analysis)}{body}</body></html>"""
