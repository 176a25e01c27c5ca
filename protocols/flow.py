"""The order of a participant's pages and what each page shows.

The sequence is a pure function of the protocol and the participant's state:

    consent -> [screening] -> scenario -> profile -> decision -> [elicitation]
      -> [hare-1 .. hare-k] -> plan-1 .. plan-n -> debrief

with each attention check inserted right after the page it names (after the last plan if
that page does not exist for this participant, e.g. they got fewer plans), and ``end``
replacing the rest when the participant declines consent, is screened out, or entered a
profile the decision model approves under ``on_approved: end``. The current page is the first
one not answered yet. HARE pages appear one at a time (their number depends on the answers);
until the plans exist, plan pages are counted with the protocol's expected number.
"""

from __future__ import annotations

from engine.scenarios.base import Scenario
from engine.study_plans import changed_items
from protocols import display
from protocols import pages as pg
from protocols.checks import plans_per_participant
from protocols.schema import Protocol
from protocols.state import Participant

END_TEXTS = {
    "declined": "You did not agree to take part. Thank you for your time; you may close this "
    "page.",
    "screened_out": "Thank you. Unfortunately you are not eligible for this study; you may "
    "close this page.",
    "approved": "The system would approve the profile you entered, so there is nothing to "
    "explain in this study. Thank you for your time.",
}


class Flow:
    """Page ids and page contents for one protocol."""

    def __init__(self, protocol: Protocol, scenario: Scenario) -> None:
        self.protocol = protocol
        self.scenario = scenario

    # ---- sequence -----------------------------------------------------------------------
    def _hare_arm(self, p: Participant) -> bool:
        return p.arm != "within" and self.protocol.arm(p.arm).method == "hare"

    def _expected_hare(self, p: Participant) -> int:
        budget = self.protocol.arm(p.arm).options.get("budget") if self._hare_arm(p) else 0
        return max(int(budget or 0), p.hare_asked)

    def page_ids(self, p: Participant) -> list[str]:
        """Every page of the participant, answered or not (module docstring)."""
        proto = self.protocol
        ids = ["consent"]
        if p.status == "declined":
            return ids + ["end"]
        if proto.screening:
            ids.append("screening")
        if p.status == "screened_out":
            return ids + ["end"]
        ids += ["scenario", "profile"]
        if p.status == "approved":
            return ids + ["end"]
        ids.append("decision")
        if proto.elicitation.scheme != "none":
            ids.append("elicitation")
        if self._hare_arm(p):
            ids += [f"hare-{k}" for k in range(1, p.hare_asked + 1)]
        n = len(p.plans) if p.plans_ready else plans_per_participant(proto, self._arm_key(p))
        plan_ids = [f"plan-{k}" for k in range(1, n + 1)]
        ids += plan_ids
        for check in proto.attention_checks:
            anchor = check.after if check.after in ids else (plan_ids[-1] if plan_ids else ids[-1])
            ids.insert(ids.index(anchor) + 1, f"attention-{check.id}")
        return ids + ["debrief"]

    def _arm_key(self, p: Participant) -> str:
        return self.protocol.arms[0].id if p.arm == "within" else p.arm

    def current_id(self, p: Participant) -> str:
        if p.status in ("declined", "screened_out", "approved"):
            return "end"
        if p.status == "complete":
            return "debrief"
        done = set(p.answered)
        for pid in self.page_ids(p):
            if pid not in done:
                return pid
        return "debrief"

    def progress(self, p: Participant, page_id: str) -> pg.Progress:
        ids = self.page_ids(p)
        total = len(ids)
        if self._hare_arm(p) and not p.hare_done:
            total += max(0, self._expected_hare(p) - p.hare_asked)
        step = ids.index(page_id) + 1 if page_id in ids else total
        return pg.Progress(step=step, total=total)

    # ---- pages --------------------------------------------------------------------------
    def page(self, p: Participant, page_id: str | None = None) -> pg.Page:
        """The page ``page_id`` (default: the current page) as the participant sees it."""
        pid = page_id or self.current_id(p)
        kind, title, payload = self._content(p, pid)
        return pg.Page(id=pid, kind=kind, title=title, progress=self.progress(p, pid),
                       payload=payload)

    def _content(self, p: Participant, pid: str) -> tuple[str, str, pg.Payload]:
        proto, sc = self.protocol, self.scenario
        if pid == "consent":
            return "consent", "Consent", pg.ConsentPayload(text=proto.consent)
        if pid == "screening":
            qs = [pg.Question(id=q.id, question=q.question, options=list(q.options))
                  for q in proto.screening]
            return "screening", "A few questions first", pg.ScreeningPayload(questions=qs)
        if pid == "scenario":
            return "scenario", sc.title, pg.TextPayload(text=proto.scenario_text or sc.story)
        if pid == "profile":
            if proto.profile.source == "own":
                return "profile_entry", "Your profile", pg.ProfileEntryPayload(
                    text=proto.profile.text or "Please enter your profile.",
                    fields=display.profile_fields(sc))
            assert p.x is not None
            return "persona", "Your profile", pg.PersonaPayload(
                text=proto.profile.text or "In this study, imagine you are this applicant.",
                rows=display.profile_rows(sc, p.x))
        if pid == "decision":
            assert p.x is not None
            return "decision", "The decision", pg.DecisionPayload(
                decision=sc.unfavourable_label, note=p.note, rows=display.profile_rows(sc, p.x),
                text=f"The automated system {sc.unfavourable_label} the application.")
        if pid == "elicitation":
            scheme = proto.elicitation.scheme
            items = [pg.Item(feature=sc.features[j].name, label=sc.features[j].label,
                             help=sc.features[j].help) for j in sc.actionable]
            levels = proto.elicitation.likert_levels or len(items) if scheme == "likert" else None
            return f"elicitation_{scheme}", "What could you change?", pg.ElicitationPayload(
                scheme=scheme, items=items, levels=levels,
                text=proto.elicitation.text or _ELICITATION_TEXT[scheme])
        if pid.startswith("hare-"):
            return self._hare_content(p, int(pid.split("-")[1]))
        if pid.startswith("plan-"):
            return self._plan_content(p, int(pid.split("-")[1]))
        if pid.startswith("attention-"):
            check = next(c for c in proto.attention_checks if f"attention-{c.id}" == pid)
            return "attention", "A quick check", pg.AttentionPayload(
                question=check.question, options=list(check.options))
        if pid == "debrief":
            return "debrief", "Thank you", pg.DebriefPayload(
                text=proto.debrief.text, completion_code=p.completion_code)
        if pid == "end":
            reason = p.status if p.status in END_TEXTS else "declined"
            return "end", "Thank you", pg.EndPayload(reason=reason, text=END_TEXTS[reason])
        raise KeyError(f"no page {pid!r}")

    def _plan_content(self, p: Participant, k: int) -> tuple[str, str, pg.Payload]:
        q = self.protocol.questions
        plan = p.plans[k - 1]
        rows = display.plan_rows(self.scenario, plan.x, plan.x_cf, plan.action_mask, plan.changed)
        impossible = [pg.ImpossibleItem(feature=r.feature, label=r.label, current=r.current,
                                        suggested=r.suggested)
                      for r in rows if r.kind == "action"] if q.impossible else []
        why = (pg.WhyQuestion(text=q.why.text, min_chars=q.why.min_chars,
                              max_chars=q.why.max_chars) if q.why.enabled else None)
        return "plan", f"Plan {k} of {len(p.plans)}", pg.PlanPayload(
            plan_id=plan.plan_id, number=k, of=len(p.plans),
            text=("If your profile were the suggested one, your application would be "
                  "approved."),
            rows=rows,
            acceptance=pg.ScaleQuestion(text=q.acceptance.text, labels=list(q.acceptance.labels)),
            action=pg.ScaleQuestion(text=q.action.text, labels=list(q.action.labels)),
            why=why, impossible=impossible, impossible_text=q.impossible_text,
        )

    def _hare_content(self, p: Participant, k: int) -> tuple[str, str, pg.Payload]:
        query = p.hare_query
        assert query is not None and p.x is not None
        budget = self._expected_hare(p) or None
        options = [self.option_rows(p, rec) for rec in query["options"]]
        if query["kind"] == "compare":
            return "hare_choice", "Which plan do you prefer?", pg.HareChoicePayload(
                query=k, budget=budget, options=[pg.HareOption(rows=r) for r in options],
                text="Which of these two plans would you rather carry out?")
        return "hare_accept", "Is this plan good enough?", pg.HareAcceptPayload(
            query=k, budget=budget, rows=options[0],
            text="Would you accept this plan, or keep looking for a better one?")

    def option_rows(self, p: Participant, rec: dict) -> list[pg.PlanRow]:
        """Plan rows of a HARE candidate record (``RecourseBatch.record`` shape)."""
        import numpy as np

        names = self.scenario.feature_names
        assert p.x is not None
        x_cf = np.array([rec["x_cf"][n] for n in names], dtype=float)
        mask = np.array([n in rec.get("actions", {}) for n in names])
        changed = changed_items(self.scenario, p.x, x_cf)[0]
        return display.plan_rows(self.scenario, p.x, x_cf, mask, changed)


_ELICITATION_TEXT = {
    "binary": "For each item, tell us whether you could change it.",
    "ranking": "Rank the items you could change from easiest (1) to hardest; leave out the "
    "ones you cannot change.",
    "likert": "For each item you could change, say how hard it would be (1 = very easy); "
    "mark the ones you cannot change.",
}
