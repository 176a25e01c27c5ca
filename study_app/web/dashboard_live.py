"""The dashboard's live part: what the running study looks like now, redrawn every
``REFRESH_SECONDS`` without a click (a Streamlit fragment with ``run_every``).

It shows the headline numbers (each defined once, ``data.study_progress.HEADLINE``, and
stated as sums that add up), the endings the recruitment platform hears about, participants
per arm and status, the arm balance against the design's target with the data-quality
flags per arm (speeders, straight-liners, attention failures: ``data.quality``), HARE's
pairwise choices and accept rates, the completion funnel (shares of visits), drop-off, time
per page, ratings by arm and plan shortfalls. Every redraw
reads a fresh snapshot of the store (on PostgreSQL a copy taken for that redraw).
"""

from __future__ import annotations

import time
from collections import Counter

import pandas as pd
import streamlit as st

from data import dashboard_queries as q
from data import study_progress as sp
from protocols.running import quotas
from protocols.running.design import assign_arm
from protocols.running.session import Study

REFRESH_SECONDS = 5


@st.fragment(run_every=REFRESH_SECONDS)
def live_view(study: Study, chosen: str, source: str | None, same_protocol: bool) -> None:
    """Everything that changes while participants take part (``same_protocol``: the chosen
    study runs the served protocol, so the design's arm targets apply)."""
    live = study.store
    # the queries are DuckDB SQL: on PostgreSQL they read a snapshot taken for this view
    store = live.snapshot()
    try:
        st.caption(f"Live: updated {time.strftime('%H:%M:%S')}, every {REFRESH_SECONDS} s "
                   "without a click.")
        _id_conflicts(store, chosen)
        _overview(store, chosen, source)
        _arms(store, chosen, source, study if same_protocol else None)
        _flags(store, chosen, source)
        _hare(store, chosen, source)
        _funnel(store, chosen, source)
        _ratings(store, chosen, source)
        _quality(store, chosen, source)
    finally:
        if store is not live:
            store.close()


def _overview(store, study_id: str, source: str | None) -> None:
    h = sp.headline(store, study_id, source)
    sp.check_headline(h)
    names = ("visits", "consented", "in_progress", "completed", "screened_out", "declined",
             "withdrawn")
    for col, name in zip(st.columns(len(names)), names, strict=True):
        label, definition = sp.HEADLINE[name]
        col.metric(label, h[name], help=definition[0].upper() + definition[1:] + ".")
    after = ", ".join(f"{s} {n}" for s, n in sorted(h["ended_after"].items())) or "none"
    before = ", ".join(f"{s} {n}" for s, n in sorted(h["ended_before"].items())) or "none"
    st.markdown(
        f"Visits {h['visits']} = consented {h['consented']} + declined {h['declined']} + "
        f"not yet consented {h['not_consented_yet']} + ended before consent "
        f"{h['ended_before_consent']} ({before}).  \n"
        f"Consented {h['consented']} = in progress {h['in_progress']} + completed "
        f"{h['completed']} + ended after consent {h['ended_after_consent']} ({after}).")
    times = q.completion_times(store, study_id, source).iloc[0]
    median = times["median_minutes"]
    st.markdown("Median time to complete: "
                + ("-" if pd.isna(median) else f"{float(median):.1f} min"))
    endings = q.end_states(store, study_id, source)
    if len(endings):
        st.markdown("**Endings** (what the recruitment platform is told): "
                    + ", ".join(f"{e} {n}" for e, n in zip(endings["ending"],
                                                          endings["participants"],
                                                          strict=True)))
    st.subheader("Participants per arm and status")
    status = q.status_by_arm(store, study_id, source)
    if len(status):
        st.dataframe(status.pivot_table(index="arm", columns="status", values="participants",
                                        fill_value=0, aggfunc="sum"))
    else:
        st.info("No participants yet.")


def design_targets(study: Study, consented: int) -> dict[str, int]:
    """How many of the first ``consented`` consent numbers the design assigns to each arm
    (permuted blocks by weight, ``protocols.running.design.assign_arm``)."""
    if study.protocol.assignment == "within":
        return {}
    return dict(Counter(assign_arm(study.protocol, s) for s in range(consented)))


def _arms(store, study_id: str, source: str | None, study: Study | None) -> None:
    st.subheader("Arm balance")
    arms = sp.arm_counts(store, study_id, source)
    if not len(arms):
        st.caption("Nobody has consented yet.")
        return
    if study is not None and study.protocol.assignment != "within":
        weights = {a.id: int(a.weight) for a in study.protocol.arms}
        total = int(arms["consented"].sum())
        target = design_targets(study, total)
        arms = arms.set_index("arm").reindex(list(weights), fill_value=0).reset_index()
        arms["target"] = [target.get(a, 0) for a in arms["arm"]]
        arms["target_share"] = [weights[a] / sum(weights.values()) for a in arms["arm"]]
        arms["off_target"] = arms["consented"] - arms["target"]
        st.caption("target: the arm the design (permuted blocks by arm weight) gives each of "
                   f"the {total} consent numbers so far; off_target = consented - target.")
    st.dataframe(arms, hide_index=True)
    if study is not None and study.protocol.quotas is not None:
        _quotas(store, study_id, study)


def _quotas(store, study_id: str, study: Study) -> None:
    """Each arm's quota: target, counted, in progress and shortfall (the numbers the next
    assignment decides by: protocols.definition.quotas)."""
    st.subheader("Quotas")
    standing = quotas.standing(store, study.protocol, study_id, study.now())
    assert standing is not None
    rule = study.protocol.quotas.counts  # type: ignore[union-attr]
    table = pd.DataFrame([{"arm": arm, **row} for arm, row in standing.detail().items()])
    st.dataframe(table.rename(columns={"counted": f"completed ({rule})"}), hide_index=True)
    st.caption(f"completed: participants who count towards the target ({rule}); in progress: "
               "consented, still answering and within the time limit; shortfall = target - "
               "completed - in progress. The next consenting participant gets the arm of the "
               "largest shortfall" + (" - the study is full: new links end on the study-full "
                                      "page." if standing.full else "."))


def _flags(store, study_id: str, source: str | None) -> None:
    st.subheader("Data-quality flags")
    flags = q.quality_flags(store, study_id, source)
    if not len(flags):
        st.caption("No answers yet.")
        return
    st.caption("Participants per arm with each flag (data.quality; the protocol's quality "
               "thresholds): speeders (total or typical page time under the set fraction "
               "of the median), straight-liners (the same rating on every plan), attention "
               "failures; flagged: any of them.")
    st.dataframe(flags, hide_index=True)


def _hare(store, study_id: str, source: str | None) -> None:
    answers = sp.hare_answers(store, study_id, source)
    if not len(answers):
        return
    st.subheader("HARE: pairwise choices and accept rates")
    choices = answers[answers["kind"] == "hare_choice"]
    accepts = answers[answers["kind"] == "hare_accept"]
    left, mid, right = st.columns(3)
    left.metric("Pairwise choices", int(choices["answers"].sum()))
    mid.metric("Accept questions", int(accepts["answers"].sum()))
    asked = int(accepts["answers"].sum())
    rate = accepts["accepted"].sum() / asked if asked else float("nan")
    right.metric("Accept rate", "-" if not asked else f"{rate:.0%}",
                 help="Accept answers that accepted the plan shown / accept answers.")
    st.caption("chose_a: share of pairwise answers preferring Plan A (shown first); "
               "accept_rate: accepted / answers of that question.")
    st.dataframe(answers, hide_index=True)


def _funnel(store, study_id: str, source: str | None) -> None:
    st.subheader("Completion funnel")
    funnel = q.funnel(store, study_id, source)
    if len(funnel):
        order = list(funnel["page_id"])
        chart = funnel.set_index("page_id")[["answered"]].reindex(order)
        st.bar_chart(chart, horizontal=True, sort=False, height=28 * len(order) + 60)
        st.caption("share_of_visits: participants who answered the page / all visits "
                   "(every participant row, consenting or not).")
        st.dataframe(funnel.rename(columns={"share": "share_of_visits"}), hide_index=True)
    drop = q.drop_off(store, study_id, source)
    st.markdown("**Where participants in progress are now** (drop-off page)")
    if len(drop):
        st.dataframe(drop, hide_index=True)
    else:
        st.caption("Nobody is in progress.")
    st.subheader("Median time per page")
    durations = q.page_durations(store, study_id, source)
    if len(durations):
        st.dataframe(durations, hide_index=True)


def _ratings(store, study_id: str, source: str | None) -> None:
    st.subheader("Ratings by arm")
    dist = q.rating_distribution(store, study_id, source)
    if not len(dist):
        st.caption("No ratings yet.")
        return
    for outcome, label in (("acceptance", "Acceptance (reasonable explanation)"),
                           ("action", "Action (would carry it out)")):
        sub = dist[dist["outcome"] == outcome]
        wide = sub.pivot_table(index="rating", columns="arm", values="ratings", fill_value=0,
                               aggfunc="sum").reindex(range(1, 8), fill_value=0)
        st.markdown(f"**{label}**: number of ratings per scale point")
        st.bar_chart(wide, stack=False, height=260)


def _quality(store, study_id: str, source: str | None) -> None:
    st.subheader("Plans shown")
    short = q.plan_shortfalls(store, study_id, source)
    if len(short):
        st.warning("Some participants got fewer plans than the protocol asks "
                   "(plans.shortfall says what happens then).")
        st.dataframe(short, hide_index=True)
    else:
        st.caption("Every participant got the plans the protocol asks.")


def _id_conflicts(store, study_id: str) -> None:
    flagged = q.id_conflicts(store, study_id)
    if not len(flagged):
        return
    st.subheader("Participant ids used from another link")
    st.warning(f"{len(flagged)} participant(s) had their recruitment id arrive with another "
               "recruitment session than their first visit. Those visits were refused; "
               "check with the recruitment platform before approving or paying.")
    st.dataframe(flagged, hide_index=True)
