"""What each protocol field means, for the generated reference (protocols.definition.reference).

Keyed by ``Model.field``; ``SHOWN`` names the fields whose text participants read (and on
which page). ``tests/protocols/test_reference.py`` checks that every field of the schema has
an entry here, so a new field cannot reach the reference undocumented.
"""

from __future__ import annotations

MEANING: dict[str, str] = {
    "Protocol.id": "Study id (lower case, digits, '-' or '_'); the database's study id by default.",
    "Protocol.title": "The study's title (dashboard, reports).",
    "Protocol.scenario": "Scenario whose world, features and story the study uses: a shipped "
                         "name (`recourse-study scenarios`) or a scenario file's path "
                         "(docs/scenarios.md).",
    "Protocol.seed": "Seed of assignment, counterbalancing, personas and plan selection.",
    "Protocol.decision_model": "trained: the scenario's trained classifier (artifact; a "
    "tabular world's: the classifier its file names, lr or ann); bayes: "
    "the exact Bayes rule of the scenario's SCM (no artifact; a reference); rule: a pool "
    "world's fixed rule (a pool world always decides by its rule).",
    "Protocol.consent": "Consent question; declining ends the session. `{plans}` becomes the "
    "plans a participant rates (\"up to five plans\" when a shortfall shows fewer).",
    "Protocol.screening": "Eligibility questions, one page; a non-eligible answer ends the "
    "session (screened_out).",
    "Protocol.scenario_text": "The scenario's story (default: the scenario's own story).",
    "Protocol.profile": "Where the participant's profile comes from.",
    "Protocol.elicitation": "Pre-hoc elicitation of what the participant could change.",
    "Protocol.arms": "The recourse methods compared (at least one).",
    "Protocol.assignment": "between: each participant sees one arm (by weight); within: every "
    "arm, plans interleaved.",
    "Protocol.plans": "How many plans each participant rates and how they are chosen.",
    "Protocol.questions": "The questions asked about every plan.",
    "Protocol.attention_checks": "Attention checks, each shown right after a page.",
    "Protocol.exclusions": "Which ratings and participants `analyze` leaves out of the models.",
    "Protocol.plan_view": "How the decision and each plan are framed (texts, column headings).",
    "PlanViewSpec.decision_text": "Text of the decision page (default: the scenario's 'The "
    "automated system rejected the application.').",
    "PlanViewSpec.text": "Text above each plan; {ordinal}, {number}, {of} are filled in (1st, "
    "1, 5).",
    "PlanViewSpec.current_label": "Heading of the plan table's current-profile column.",
    "PlanViewSpec.suggested_label": "Heading of the plan table's suggested-profile column.",
    "ExclusionSpec.impossible_items": "Leave out ratings whose participant marked a changed "
    "item impossible (the reference study's rule).",
    "Protocol.debrief": "The last page.",
    "Protocol.recruitment": "What a recruitment link's participant id must look like, and "
    "where each ending sends the participant back (docs/participants.md).",
    "RecruitmentSpec.id_pattern": "Regular expression the whole recruitment id must match "
    "(e.g. `[0-9a-f]{24}` for Prolific); a link whose id does not match starts nobody.",
    "RecruitmentSpec.completion": "The debrief's ending (and a session the study ended: "
    "profile approved, too few plans): code (default: debrief.completion_code, else one per "
    "participant) and return URL.",
    "RecruitmentSpec.screened_out": "The screened-out ending: code and return URL.",
    "RecruitmentSpec.no_consent": "The ending of a participant who did not consent (the "
    "platform's returned submission): code and return URL.",
    "RecruitmentSpec.withdrawn": "The ending of a participant who withdrew (default: "
    "no_consent's).",
    "RecruitmentSpec.timed_out": "The ending of a participant past the protocol's "
    "time_limit (the platform's timed-out return): code and return URL.",
    "RecruitmentSpec.study_full": "The ending of a visit that finds every arm's quota "
    "reached (the study-full page): code and return URL.",
    "Ending.code": "Code shown on the end page and put into the URL's {code} (letters, digits, "
    "'-' or '_').",
    "Ending.url": "Return URL, https://...; {code} and {id} (the recruitment id of the link) "
    "are filled in, URL-quoted; the end page redirects there after 5 s.",
    "Protocol.quality": "Data-quality flag thresholds (speeders, straight-liners; "
    "docs/participants.md).",
    "QualitySpec.speeder_fraction": "A participant whose total time, or typical page time, is "
    "under this fraction of the median is a speeder.",
    "QualitySpec.straightliner_min_ratings": "Straight-liner: the same acceptance and the "
    "same action rating on every plan, over at least this many plans.",
    "Protocol.quotas": "Per-arm targets among completers: the next consenting participant "
    "gets the arm of the largest shortfall (target - counted - in progress); when no arm "
    "has a place left, new links end on the study-full page (docs/participants.md). "
    "Absent: permuted blocks only.",
    "QuotaSpec.targets": "Arm id -> how many participants who count it wants (every arm, "
    "each at least 1).",
    "QuotaSpec.counts": "Who counts towards a target: complete (reached the debrief); "
    "complete_unflagged (and no data-quality flag: speeder, straight-liner, failed "
    "attention check); not_excluded (and not left out as a whole by `exclusions`: a failed "
    "attention check under failed_attention, fewer plans under fewer_plans).",
    "Protocol.time_limit": "A session's time limit from the participant's first visit "
    "(server time): past it the participant sees the time-is-up page, their status becomes "
    "timed_out and their place frees for quotas. Absent: no limit.",
    "TimeLimitSpec.seconds": "The limit in seconds (more than 0; longer than "
    "sessions.delay_seconds in a study of two sessions).",
    "TimeLimitSpec.warning_seconds": "From this many seconds on, every page says how many "
    "minutes are left (less than the limit; absent: no warning).",
    "Protocol.simulation": "The hidden behaviour of synthetic participants (pilots, power); "
    "see 'The synthetic behaviour model' below.",
    "ScreeningQuestion.id": "Question id (answers are stored under it).",
    "ScreeningQuestion.question": "The question.",
    "ScreeningQuestion.options": "single and multiple: the answer options (at least two).",
    "ScreeningQuestion.eligible": "Options that let the participant continue (select all: "
    "every ticked option must be one of them).",
    "ScreeningQuestion.kind": "single: one option; multiple: select all that apply (one or "
    "more options); number: a number in min..max (e.g. the age in years).",
    "ScreeningQuestion.min": "number: the smallest accepted answer.",
    "ScreeningQuestion.max": "number: the largest accepted answer.",
    "ScreeningQuestion.decimals": "number: decimal places of the answer.",
    "ScreeningQuestion.unit": "number: the unit shown with the answer (e.g. years old).",
    "ScreeningQuestion.brackets": "single: one [low, high] per option (null: no value) in the "
    "display units of the profile feature it answers (profile.from_screening); the profile "
    "takes the chosen bracket's midpoint.",
    "Protocol.screening_first": "true: the screening page comes before the consent page (the "
    "reference study's order); false: consent first.",
    "Protocol.sessions": "A study in two sessions: a pause after a page, the rest opening "
    "after a delay; the participant returns by their link "
    "(docs/reference-study-procedure.md).",
    "SessionsSpec.delay_seconds": "Seconds between the end of the first session and the "
    "opening of the second (0: one session; the reference study: two weeks, 1209600).",
    "SessionsSpec.break_after": "The page the first session ends with (profile or "
    "screening).",
    "SessionsSpec.text": "The pause page; {when} becomes the date and time (UTC) the second "
    "session opens.",
    "ProfileSpec.from_screening": "Profile features answered by a bracketed screening "
    "question (feature: question id), left out of the profile page; the feature takes the "
    "bracket's midpoint (e.g. income 4M - 5M -> 4.5).",
    "ProfileSpec.source": "own: the participant enters their profile; persona: one rejected "
    "applicant of the scenario is assigned.",
    "ProfileSpec.on_approved": "When an entered profile is approved by the decision model: "
    "persona (continue with an assigned persona) or end the session.",
    "ProfileSpec.persona_split": "Data split personas are drawn from.",
    "ProfileSpec.text": "Text above the profile (default depends on source).",
    "ElicitationSpec.scheme": "none, binary (can / cannot change each item), ranking (rank "
    "the changeable items, easiest first) or likert (a difficulty level per item).",
    "ElicitationSpec.likert_levels": "Likert levels (default: one per actionable item, 4 for "
    "Loan).",
    "ElicitationSpec.likert_low": "What level 1 means to the participant: easiest (1 = very "
    "easy) or hardest (1 = very hard). Stored answers are the participant's; the constraints "
    "are built the right way round.",
    "ElicitationSpec.text": "Instructions of the elicitation page (default states the scale "
    "direction).",
    "ElicitationSpec.default": "What an item left unanswered takes (ranking: shown_order, the "
    "order first shown; binary: true or false; likert: a level or cannot); the stored answer "
    "lists such items in left_at_default. Unset (the default): every item must be answered "
    "and an untouched ranking is refused.",
    "ElicitationSpec.min_changeable": "The fewest items a participant must leave "
    "changeable (0: no minimum). The page says so, and an answer with fewer is refused "
    "with that message and nothing stored; the synthetic participants state at least as "
    "many.",
    "ArmSpec.id": "Arm id (stored with every plan).",
    "ArmSpec.method": "Recourse method of the catalogue (oracle, icarma, carma, pool, hare, "
    "wachter, gs).",
    "ArmSpec.options": "The method's options (checked against its constructor). hare: budget "
    "B, iterations T, iterations_reading (text: T rounds of B / T questions, the paper's "
    "text, the default; code: rounds of T new candidates, B // T of them, no accept "
    "question, as the paper's released code runs), keep_incumbent, final_accept, "
    "gamma_schedule, calibrate, boundary_margin, ... (docs/hare.md).",
    "ArmSpec.personalized": "The method sees the stated constraints (false: everybody can "
    "change every actionable item; satisfaction and violation are still measured).",
    "ArmSpec.cost_profile": "How stated difficulty maps to action-cost weights.",
    "ArmSpec.source": "candidates: plans come from the method's candidate set (a design picks "
    "several); recourse: its one recourse (design best).",
    "ArmSpec.base": "Base method of a method that wraps one (hare).",
    "ArmSpec.base_options": "The base method's options.",
    "ArmSpec.weight": "Relative share of participants under between assignment.",
    "PlanSpec.per_participant": "Plans per participant (per arm under within assignment); "
    "`validate` warns above 6.",
    "PlanSpec.design": "tominaga: sparsest, most proximate, rest at random; stratified: one "
    "per equal-count bin of `distance`; best: the method's recourse.",
    "PlanSpec.distance": "Distance of the stratified design.",
    "PlanSpec.sparsity": "Sparsity measure of the tominaga design.",
    "PlanSpec.proximity": "Proximity measure of the tominaga design.",
    "PlanSpec.order": "Order of the plans: counterbalanced (Latin square), random or fixed.",
    "PlanSpec.prune_actions": "Drop every action a plan is valid without, and never show a "
    "change below an item's display resolution as an action (off: the method's plans as "
    "generated, as in a paper reproduction).",
    "PlanSpec.shortfall": "What happens when fewer plans than asked can be shown (no valid "
    "plan under the participant's constraints, plans outside the display bounds).",
    "PlanSpec.directions": "Allowed directions of change (feature: increase | decrease | any) "
    "on top of the scenario's; every method of the study obeys them with the other plan "
    "rules (no no-op or invisible change), HARE by projecting its candidates.",
    "PlanSpec.bounds": "Plausible-change bounds in place of the scenario's (feature: "
    "{relative, absolute, none, min, max}): how far one plan may move the feature and the "
    "range it stays in; every method of the study searches within them.",
    "BoundSpec.relative": "Largest step per plan as a share of the current value (0.5: by "
    "half); with `absolute`, whichever allows more.",
    "BoundSpec.absolute": "Largest step per plan in display units (levels of an ordinal "
    "item).",
    "BoundSpec.none": "No step limit (the range still holds).",
    "BoundSpec.min": "Lowest value a plan may ask for, in display units (left out: what "
    "the scenario's population has).",
    "BoundSpec.max": "Highest value a plan may ask for, in display units (left out: what "
    "the scenario's population has).",
    "PlanSpec.ties": "Which of several sparsest / most proximate candidates the tominaga "
    "design takes: random, or nearest (least on the other measure first; the smallest jump "
    "among the sparsest). Both follow the paper's rule.",
    "PlanSpec.consequences": "An item the participant cannot change that moves as a "
    "consequence of the plan's actions: explain (the page says what it follows from) or "
    "forbid (such plans are not shown).",
    "ShortfallSpec.then": "fewer: show the plans there are; fallback: fill the gap with "
    "`fallback.method`; end: end the session with `message`.",
    "ShortfallSpec.fallback": "The method that fills a shortfall (then: fallback).",
    "ShortfallSpec.message": "Shown when a shortfall ends the session (then: end), and on the "
    "debrief of a participant for whom no plan at all was found (then: fewer).",
    "FallbackSpec.method": "Fallback recourse method.",
    "FallbackSpec.options": "Its options.",
    "QuestionsSpec.acceptance": "The acceptance question (7-point).",
    "QuestionsSpec.action": "The action question (7-point).",
    "QuestionsSpec.why": "Free-text reasons after each rating.",
    "QuestionsSpec.impossible": "Ask 'is it impossible for you?' for every action item.",
    "QuestionsSpec.impossible_text": "The impossibility question.",
    "RatingQuestion.text": "The question.",
    "RatingQuestion.labels": "Labels of the 7 points (7 labels, or 2 for the ends).",
    "WhySpec.enabled": "Ask for reasons (on by default; `validate` warns when not stated).",
    "WhySpec.text": "The reason question.",
    "WhySpec.min_chars": "Least characters of a reason.",
    "WhySpec.max_chars": "Most characters of a reason.",
    "AttentionCheck.id": "Check id (the page is attention-<id>).",
    "AttentionCheck.after": "Page it follows (consent, scenario, profile, decision, "
    "elicitation, plan-<k>, ...).",
    "AttentionCheck.question": "The question.",
    "AttentionCheck.options": "Options.",
    "AttentionCheck.correct": "The correct option (a wrong answer sets "
    "ratings_long.attention_passed false).",
    "ExclusionSpec.failed_attention": "Leave out participants who failed an attention check.",
    "ExclusionSpec.fewer_plans": "Leave out participants who rated fewer plans than asked.",
    "DebriefSpec.text": "The debrief text.",
    "DebriefSpec.fewer_plans": "The debrief text of a participant who rated fewer plans "
    "than promised (null: `text` for everybody).",
    "DebriefSpec.no_plans": "The debrief text of a participant for whom no plan was found, "
    "below the shortfall's message (null: `fewer_plans`, else `text`).",
    "DebriefSpec.completion_code": "Completion code shown (null: one per participant).",
    "SimulationSpec.seed": "Seed of the synthetic participants.",
    "SimulationSpec.ratings": "The rating model (per outcome).",
    "SimulationSpec.constraints": "The synthetic participants' true constraints.",
    "SimulationSpec.reporting": "How they misreport them in the elicitation.",
    "SimulationSpec.hare": "How they answer HARE's questions.",
    "SimulationSpec.attention_pass_rate": "Probability of answering an attention check "
    "correctly.",
    "RatingOverrides.distance": "The distance that drives the ratings (default l1_profile).",
    "RatingOverrides.acceptance": "The acceptance rating's parameters.",
    "RatingOverrides.action": "The action rating's parameters.",
    "OutcomeOverrides.at_zero": "Mean rating (1..7) of the typical participant for a plan at "
    "distance 0.",
    "OutcomeOverrides.at_far": "Their mean rating far away (at_far < at_zero: ratings fall "
    "with distance).",
    "OutcomeOverrides.half_distance": "Distance where the mean rating is halfway between "
    "at_zero and at_far.",
    "OutcomeOverrides.intercept": "Latent-scale alias of at_zero: a.",
    "OutcomeOverrides.drop": "Latent-scale alias of at_far: the fall of eta from d = 0 to far "
    "away (alone it moves every plan beyond `scale` down by the same amount).",
    "OutcomeOverrides.scale": "Latent-scale alias of half_distance: f(d) = -drop (1 - "
    "exp(-d / scale)).",
    "OutcomeOverrides.satisfaction": "k: latent effect of preference satisfaction s in [0, 1].",
    "OutcomeOverrides.violation": "nu: latent penalty of using an item the person cannot "
    "change.",
    "OutcomeOverrides.sd_intercept": "sd of participants' random intercepts u_p.",
    "OutcomeOverrides.sd_slope": "sd of participants' random slopes b_p on distance.",
    "OutcomeOverrides.cutpoints": "The 6 increasing cut points c_1..c_6.",
    "OutcomeOverrides.curve_of": "Whose mean rating the curve (at_zero, at_far, "
    "half_distance) is: typical (the participant with u_p = b_p = 0; the default) or "
    "population (the mean over all participants, as a Gaussian mixed model such as mgcv's "
    "GAMM estimates it; with random slopes the two differ far away).",
    "ConstraintsSpec.distribution": "Preference distribution of the true constraints.",
    "ConstraintsSpec.n_actionable_probs": "Probability of each number 1..|F| of changeable "
    "items (uniform if null).",
    "ConstraintsSpec.cost_slope": "How fast true action cost grows with difficulty rank.",
    "ReportingSpec.swap_rate": "Adjacent rank swaps in the reported ranking.",
    "ReportingSpec.mark_error_rate": "Wrong can / cannot marks, per item.",
    "HareSpec.temperature": "Luce choice temperature on the true personal cost.",
    "HareSpec.threshold": "Median cost a person accepts.",
    "HareSpec.threshold_sd": "Lognormal spread of that threshold.",
}

SHOWN: dict[str, str] = {
    "Protocol.consent": "consent page",
    "ScreeningQuestion.question": "screening page",
    "ScreeningQuestion.options": "screening page",
    "ScreeningQuestion.unit": "screening page",
    "SessionsSpec.text": "pause page (between the two sessions)",
    "Protocol.scenario_text": "scenario page",
    "ProfileSpec.text": "profile page",
    "ElicitationSpec.text": "elicitation page",
    "ElicitationSpec.likert_levels": "elicitation page (the scale)",
    "ElicitationSpec.min_changeable": "elicitation page (the minimum's message)",
    "RatingQuestion.text": "every plan page",
    "RatingQuestion.labels": "every plan page",
    "WhySpec.text": "every plan page",
    "QuestionsSpec.impossible_text": "every plan page",
    "PlanViewSpec.decision_text": "decision page",
    "PlanViewSpec.text": "every plan page",
    "PlanViewSpec.current_label": "every plan page",
    "PlanViewSpec.suggested_label": "every plan page",
    "AttentionCheck.question": "attention page",
    "AttentionCheck.options": "attention page",
    "ShortfallSpec.message": "end page; debrief page when no plan was found",
    "DebriefSpec.text": "debrief page",
    "DebriefSpec.fewer_plans": "debrief page",
    "DebriefSpec.no_plans": "debrief page",
    "DebriefSpec.completion_code": "debrief page",
    "Ending.code": "end page (debrief page for completion)",
}
