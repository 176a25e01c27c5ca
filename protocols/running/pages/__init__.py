"""The page/answer contract between the study session and whoever renders it.

One class per page kind (``PageKind``, protocols.running.pages.base): its payload, answer validation,
effect on the session and the synthetic participant's answer. The registry ``PAGE_KINDS``
(kind -> PageKind) replaces every branch on a kind; importing this package registers the
shipped kinds:

| kind | slot | payload | answer |
| --- | --- | --- | --- |
| consent | consent | ConsentPayload(text) | ConsentAnswer(agree) |
| screening | screening | ScreeningPayload(questions[id, question, options, kind single/multiple/number, min, max, decimals, unit]) | ScreeningAnswer(answers: {question id: option, [options] (select all) or number}) |
| scenario | scenario | TextPayload(text) | AckAnswer() = {} |
| profile_entry | profile | ProfileEntryPayload(text, fields[feature, label, help, kind number/category, unit, min, max, decimals, options]) | ProfileAnswer(values: {feature: number in display units, or category label/code}) |
| persona | profile | PersonaPayload(text, rows[feature, label, value]) | AckAnswer() |
| decision | decision | DecisionPayload(decision, text, note, rows) | AckAnswer() |
| elicitation_binary / _ranking / _likert | elicitation | ElicitationPayload(scheme, text, items[feature, label, help], levels, default) | ElicitationAnswer(answers: {feature: value}, left_at_default: [feature] left at the protocol's declared default) |
| plan | plan | PlanPayload(plan_id, number, of, text, rows[label, current, suggested, kind action/consequence/same], acceptance, action, why, impossible items, impossible_text) | PlanAnswer(acceptance 1..7, action 1..7, acceptance_why, action_why, impossible: {feature: bool} for exactly the action items) |
| hare_choice | hare | HareChoicePayload(query, budget, text, options[2][rows]) | HareChoiceAnswer(choice: 0 or 1) |
| hare_accept | hare | HareAcceptPayload(query, budget, text, rows) | HareAcceptAnswer(accept) |
| attention | attention | AttentionPayload(question, options) | AttentionAnswer(choice: option) |
| pause | pause | PausePayload(text, opens_at) | none: the second session opens later (protocols.running.flow) |
| debrief | debrief | DebriefPayload(text, completion_code, no_plans, url) | none: the session is complete |
| end | end | EndPayload(reason, text, ending, code, url) | none: declined, screened out, withdrawn, too few plans, or the own profile was approved |

Adding a page kind: a ``PageKind`` subclass decorated with ``register`` in a module imported
here, and a renderer with its load answer registered for its kind in ``study_app.web``
(``study_app.web.registry``; docs/adding-a-page-kind.md).
"""

from __future__ import annotations

from protocols.running.display import PlanRow, ProfileField, ProfileRow
from protocols.running.pages.base import (
    PAGE_KINDS,
    SLOTS,
    AckAnswer,
    AnswerError,
    Page,
    PageKind,
    PageModel,
    Progress,
    register,
    slot_of,
    validate_answer,
)
from protocols.running.pages.close import (
    Attention,
    AttentionAnswer,
    AttentionPayload,
    Debrief,
    DebriefPayload,
    End,
    EndPayload,
    Pause,
    PausePayload,
)
from protocols.running.pages.elicitation import (
    ElicitationAnswer,
    ElicitationBinary,
    ElicitationLikert,
    ElicitationPayload,
    ElicitationRanking,
    Item,
)
from protocols.running.pages.interactive import (
    HareAccept,
    HareAcceptAnswer,
    HareAcceptPayload,
    HareChoice,
    HareChoiceAnswer,
    HareChoicePayload,
    HareOption,
)
from protocols.running.pages.intro import (
    Consent,
    ConsentAnswer,
    ConsentPayload,
    Decision,
    DecisionPayload,
    Persona,
    PersonaPayload,
    ProfileAnswer,
    ProfileEntry,
    ProfileEntryPayload,
    Question,
    ScenarioText,
    Screening,
    ScreeningAnswer,
    ScreeningPayload,
    TextPayload,
)
from protocols.running.pages.plan import (
    ImpossibleItem,
    Plan,
    PlanAnswer,
    PlanPayload,
    ScaleQuestion,
    WhyQuestion,
)

__all__ = [
    "PAGE_KINDS", "SLOTS", "AckAnswer", "AnswerError", "Attention", "AttentionAnswer",
    "AttentionPayload", "Consent", "ConsentAnswer", "ConsentPayload", "Debrief",
    "DebriefPayload", "Decision", "DecisionPayload", "ElicitationAnswer", "ElicitationBinary",
    "ElicitationLikert", "ElicitationPayload", "ElicitationRanking", "End", "EndPayload",
    "HareAccept", "HareAcceptAnswer", "HareAcceptPayload", "HareChoice", "HareChoiceAnswer",
    "HareChoicePayload", "HareOption", "ImpossibleItem", "Item", "Page", "PageKind",
    "PageModel", "Persona", "PersonaPayload", "Plan", "PlanAnswer", "PlanPayload", "PlanRow",
    "ProfileAnswer", "ProfileEntry", "ProfileEntryPayload", "ProfileField", "ProfileRow",
    "Pause", "PausePayload", "Progress", "Question", "ScaleQuestion", "ScenarioText", "Screening", "ScreeningAnswer",
    "ScreeningPayload", "TextPayload", "WhyQuestion", "register", "slot_of", "validate_answer",
]
