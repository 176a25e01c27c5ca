"""The study interface's own words, in English: page titles, buttons, table headings, the
messages for a missing answer, errors and early endings.

These are the participant-facing texts that no protocol states; a protocol's translation
file translates them under ``interface`` by the keys below (protocols.definition.translation). Texts
with ``{fields}`` are filled in when shown (``english(key, **fields)`` here, the
translator's ``ui`` in another language).
"""

from __future__ import annotations

INTERFACE: dict[str, str] = {
    # page titles (protocols.running.pages)
    "title.consent": "Consent",
    "title.screening": "A few questions first",
    "title.profile": "Your profile",
    "title.decision": "The decision",
    "title.plan": "Plan {number} of {of}",
    "title.attention": "A quick check",
    "title.elicitation": "What could you change?",
    "title.hare_choice": "Which plan do you prefer?",
    "title.hare_accept": "Is this plan good enough?",
    "title.closing": "Thank you",
    "title.pause": "See you soon",
    "pause.link": "Your link to the next part (keep it):",
    "decision.default": "The automated system {decision} the application.",
    "note.approved": "The system would approve the profile you entered. For this study, "
    "please imagine you are the applicant below, whose application was rejected.",
    "note.nothing_changeable": "You told us that you cannot change any of the items, so we "
    "cannot offer you a plan: every plan asks for a change to at least one item. That is a "
    "valid answer, and it is recorded as you gave it. There is nothing more to rate.",
    # controls
    "continue": "Continue",
    "agree": "I agree to take part",
    "disagree": "I do not agree",
    "agree_question": "Do you agree to take part?",
    "yes": "Yes",
    "no": "No",
    "choose": "Choose ...",
    "type_number": "Type a number",
    "range": "{min} to {max}",
    "out_of_range": "Please enter a number from {min} to {max}.",
    "below_minimum": "Please enter a number of at least {min}.",
    "above_maximum": "Please enter a number of at most {max}.",
    "at_least_chars": "At least {n} characters.",
    "at_most_chars": "At most {n} characters.",
    "language": "Language",
    # missing answers
    "missing": "Please answer every question before you continue. Missing:",
    "missing.agree": "whether you agree to take part",
    "missing.acceptance": "the first rating (reasonable explanation)",
    "missing.action": "the second rating (would you carry it out)",
    "missing.impossible": "impossible? ({label})",
    "missing.reason_first": "a reason for the first rating (at least {n} characters)",
    "missing.reason_second": "a reason for the second rating (at least {n} characters)",
    "missing.reason_first_text": "the reason for the first rating",
    "missing.reason_second_text": "the reason for the second rating",
    "too_long": "This reason is {n} characters long; please shorten it to at most {max} "
    "characters.",
    "missing.attention": "the question above",
    "missing.mark": "Please answer this question.",
    # what the participant could change (study_app.web.render_elicitation)
    "elicitation.could_change": "Could you change: {label}?",
    "elicitation.how_hard": "How hard would it be for you to change: {label}?",
    "elicitation.very_easy": "very easy",
    "elicitation.very_hard": "very hard",
    "elicitation.cannot": "I cannot change this",
    "elicitation.can": "I can change this",
    "elicitation.ranking_hint": "1 = easiest. Use the buttons to reorder; mark items you "
    "could not change.",
    "elicitation.move_up": "Move up",
    "elicitation.move_down": "Move down",
    "elicitation.move_up_item": "Move {label} up",
    "elicitation.move_down_item": "Move {label} down",
    "elicitation.as_shown": "The order above is already my answer",
    "elicitation.untouched": "Please put the items in your order (or mark the ones you "
    "cannot change) before you continue. If the order shown is already yours, tick \"The "
    "order above is already my answer\".",
    "elicitation.min_changeable": "Please leave at least {n} items that you could change, so "
    "that we can show you plans that would change the decision.",
    # an interactive method's questions (study_app.web.render_plan: HARE)
    "hare.choice_text": "Which of these two plans would you rather carry out?",
    "hare.accept_text": "Would you accept this plan, or keep looking for a better one?",
    "hare.question": "Question {query}",
    "hare.question_of": "Question {query} of at most {budget}",
    "hare.plan_a": "Plan A",
    "hare.plan_b": "Plan B",
    "hare.choice": "Which plan would you rather carry out?",
    "hare.missing_choice": "which plan you prefer",
    "hare.the_plan": "The plan",
    "hare.now": "Your profile now",
    "hare.suggested": "Suggested profile",
    "hare.decision": "Your decision",
    "hare.accept": "Accept this plan",
    "hare.go_on": "Keep looking for a better plan",
    "hare.missing_accept": "whether you accept the plan",
    # tables of profiles and plans (study_app.web.plan_table)
    "table.item": "Item",
    "table.application": "The application",
    "table.applicant": "The applicant",
    "table.tag_change": "change",
    "table.tag_follows": "follows",
    "table.sr_change": "(you change this)",
    "table.sr_follows": "(changes as a result)",
    "table.legend_change": "an item the plan asks you to change",
    "table.legend_follows": "an item that changes as a result",
    # why an item changes as a result (protocols.running.display: the English note's words)
    "cause.follows": "follows from {causes}",
    "cause.higher": "the higher {label}",
    "cause.lower": "the lower {label}",
    "cause.and": " and ",
    "cause.comma": ", ",
    "progress": "{pct}% complete",
    "progress.label": "Study progress",
    # the end of a study (protocols.running.pages.close, study_app.web.render_close)
    "end.declined": "You did not agree to take part. Thank you for your time; you may close "
    "this page.",
    "end.screened_out": "Thank you. Unfortunately you are not eligible for this study; you "
    "may close this page.",
    "end.approved": "The system would approve the profile you entered, so there is nothing "
    "to explain in this study. Thank you for your time.",
    "end.withdrawn": "You have withdrawn from the study, and every answer you gave has been "
    "deleted. Thank you for your time; you may close this page.",
    "end.timed_out": "Thank you for your time. This study has a time limit, and it has now "
    "passed, so the study has ended for you. Your place has gone to someone else.",
    "end.full": "Thank you for your interest. This study already has all the participants "
    "it needs, so there is no place left for you, and nothing more is asked of you.",
    "time.warning": "Please note: this study has a time limit, and about {minutes} min of "
    "it are left.",
    "completion_code": "Your completion code:",
    "your_code": "Your code:",
    "close_page": "You may now close this page.",
    "return": "Return to the study platform",
    "return_finish": "Return to the study platform to finish",
    "redirect": "You will be taken there automatically in {seconds} seconds.",
    # errors (study_app.web.participant, study_app.web.withdraw)
    "error.unavailable": "Sorry, the study is not available right now. Nothing you answered "
    "is lost; please try again in a few minutes with the same link. (Error id {error_id}.)",
    "error.not_saved": "Sorry, something went wrong while saving your answer; nothing was "
    "stored. Please try again in a moment. (Error id {error_id}.)",
    "error.rejected": "Your answer could not be saved: {problems}",
    "error.language": "This study link is not valid: it asks for a language this study is "
    "not offered in ({language}). The study is offered in {languages}. Please open the link "
    "from your invitation again.",
    "moved_on": "That page was already answered, perhaps in another tab or window. Your "
    "earlier answer is kept; here is where you are now.",
    "show_current": "Show my current page",
    # the server cannot be reached (study_app.web.style.outage_notice)
    "outage.title": "Reconnecting ...",
    "outage": "The connection to the study was interrupted. Your answers so far are saved. "
    "Please keep this page open: the study continues here as soon as the connection is back.",
    "withdraw": "Withdraw from the study",
    "withdraw.help": "Stop taking part and delete every answer you have given.",
    "withdraw.confirm": "**Withdraw from the study?** Every answer you have given will be "
    "deleted straight away and cannot be recovered, and you cannot continue afterwards. You "
    "do not have to give a reason.",
    "withdraw.yes": "Yes, withdraw and delete my answers",
    "withdraw.no": "No, go back to the study",
    "withdraw.failed": "Sorry, your withdrawal could not be completed; nothing was deleted. "
    "Please try again in a moment. (Error id {error_id}.)",
}


def english(key: str, **fields: object) -> str:
    """The English interface text ``key``, its ``{fields}`` filled in."""
    text = INTERFACE[key]
    return text.format(**fields) if fields else text
