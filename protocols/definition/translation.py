"""A protocol in several languages: its translation files, their checks, and the translator
a page is shown with.

English is the source language: a protocol's texts are written in English, and each other
language has one file next to the protocol, ``translations/<protocol id>.<language>.yaml``
(a BCP 47 language code Babel knows: ``ja``, ``de``, ``pt_BR``)::

    language: ja
    texts: {consent: ..., screening.age.question: ..., ...}
    scenario: {title: ..., residence.label: ..., residence.levels: [...], ...}
    interface: {continue: 次へ, ...}

The keys of each section are protocols.definition.translation_source's. ``check`` lists every problem
of a file at once: a key missing (a text the participant would read in English) or unknown
(a stale or mistyped key), a list whose length differs from its English, a template whose
``{fields}`` differ, one English text given two translations, a language Babel does not
know. ``validate`` reports them as errors.

``Translator`` shows a page in its language: ``text`` turns an English text as shown
(templates filled) into the language's, ``ui`` gives an interface text, ``number`` and
``date`` format for the language (Babel); English's translator changes nothing.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from datetime import UTC, datetime
from datetime import date as Date
from pathlib import Path
from typing import Any

import yaml
from babel import Locale, UnknownLocaleError
from babel.dates import format_date, format_datetime
from babel.numbers import format_currency, format_decimal

from protocols.definition.interface_text import INTERFACE
from protocols.definition.schema import Protocol, load_protocol, resolve, shipped_protocols
from protocols.definition.translation_source import FILLS, source
from protocols.definition.validation import suggest

SOURCE_LANGUAGE = "en"
TRANSLATION_DIR = Path(__file__).resolve().parents[1] / "translations"  # the shipped protocols'
SECTIONS = ("texts", "scenario", "interface")
MAX_PLANS_SHOWN = 20  # plan texts and titles are prepared for up to this many plans
_PAYLOAD_INTERFACE = ("title", "end", "note", "hare")  # interface texts pages carry in English
_MEANING = re.compile(r" \(([^()]+)\)$")
_FILE = re.compile(r"^(?P<protocol>[a-z0-9][a-z0-9_-]*)\.(?P<lang>[A-Za-z]{2,3}(?:_[A-Za-z0-9]+)?)"
                   r"\.ya?ml$")


class TranslationError(ValueError):
    """A translation file is broken; ``problems`` lists (key, message) pairs.

    >>> from protocols import TranslationError
    >>> e = TranslationError("study.ja.yaml", [("texts.consent", "missing")])
    >>> print(e)
    study.ja.yaml: 1 problem(s) in the translation:
      - texts.consent: missing
    """

    def __init__(self, source_name: str, problems: list[tuple[str, str]]) -> None:
        self.source = source_name
        self.problems = problems
        lines = "\n".join(f"  - {k}: {m}" for k, m in problems)
        super().__init__(f"{source_name}: {len(problems)} problem(s) in the translation:\n"
                         f"{lines}")


def translations_dir(id_or_path: str | Path) -> Path:
    """Where a protocol's translation files are: ``translations/`` next to its file.

    >>> from protocols import translations_dir
    >>> folder = translations_dir("tominaga-replication")
    >>> folder.name, folder.parent.name, (folder / "tominaga-replication.ja.yaml").is_file()
    ('translations', 'protocols', True)
    """
    return resolve(id_or_path).parent / "translations"


def translation_files(protocol_id: str, directory: Path) -> dict[str, Path]:
    """language -> translation file of ``protocol_id`` in ``directory``."""
    out = {}
    for path in sorted(directory.glob(f"{protocol_id}.*.y*ml")):
        m = _FILE.match(path.name)
        if m and m["protocol"] == protocol_id:
            out[m["lang"]] = path
    return out


def language_problem(language: str) -> str | None:
    """Why ``language`` is not a language code Babel knows (None: it is)."""
    try:
        Locale.parse(language)
    except (UnknownLocaleError, ValueError, TypeError) as e:
        return f"unknown language code {language!r} ({e})"
    return None


def language_name(language: str) -> str:
    """The language's name in itself ("日本語", "English")."""
    name = Locale.parse(language).get_display_name(language) or language
    return name[:1].upper() + name[1:]


def _fields(text: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(text) if f}


def _section_problems(section: str, english: dict[str, Any], given: Any) -> list[tuple[str, str]]:
    if not isinstance(given, dict):
        return [(section, "expected a mapping of keys to translated texts")]
    out = [(f"{section}.{k}", "missing: participants would read this text in English")
           for k in english if k not in given]
    for k in given:
        if k not in english:
            near = suggest(k, english)
            out.append((f"{section}.{k}", "unknown key: the protocol has no such text" +
                        (f"; did you mean {' or '.join(near)}?" if near else "")))
    for k, en in english.items():
        if k not in given:
            continue
        value = given[k]
        where = f"{section}.{k}"
        if isinstance(en, list):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                out.append((where, f"expected a list of {len(en)} texts"))
            elif len(value) != len(en):
                out.append((where, f"{len(value)} texts for {len(en)} English ones"))
        elif k.endswith(".unit") and section == "scenario":
            out += _unit_problems(where, value)
        elif not isinstance(value, str) or not value.strip():
            out.append((where, "expected a non-empty text"))
        elif _fields(value) != _fields(en):
            out.append((where, f"has the fields {sorted(_fields(value))}, the English "
                        f"{sorted(_fields(en))}"))
    return out


def _unit_problems(where: str, value: Any) -> list[tuple[str, str]]:
    if isinstance(value, str):
        return [] if _fields(value) == {"value"} else [(where, "a unit pattern holds {value}")]
    if isinstance(value, dict) and set(value) <= {"currency", "factor", "entry"} and (
            "currency" in value):
        factor = value.get("factor", 1)
        if isinstance(factor, int | float) and factor > 0:
            return []
    return [(where, "expected a pattern with {value} or {currency: <ISO code>, factor: "
             "<number>, entry: <the unit a number is typed in>}")]


def check(p: Protocol, data: Any, language: str | None = None) -> list[tuple[str, str]]:
    """Every problem of a translation file's content for protocol ``p`` (module docstring)."""
    if not isinstance(data, dict):
        return [("(file)", "a translation file is a YAML mapping")]
    out: list[tuple[str, str]] = []
    lang = data.get("language")
    if not isinstance(lang, str):
        out.append(("language", "missing: the language code (e.g. ja)"))
    else:
        if (problem := language_problem(lang)) is not None:
            out.append(("language", problem))
        if language is not None and lang != language:
            out.append(("language", f"{lang!r} but the file name says {language!r}"))
        if lang == SOURCE_LANGUAGE:
            out.append(("language", "English is the protocol's own language"))
    out += [(k, "unknown section (expected language, texts, scenario, interface)")
            for k in data if k not in ("language", *SECTIONS)]
    english = source(p)
    for section in SECTIONS:
        out += _section_problems(section, english[section], data.get(section, {}))
    if not out:
        out += [("(texts)", m) for m in Translator.build(p, lang, data).conflicts]
    return out


def load(p: Protocol, path: Path) -> Translator:
    """The translator of a translation file; TranslationError with every problem."""
    m = _FILE.match(path.name)
    if m is None or m["protocol"] != p.id:
        raise TranslationError(str(path), [("(file)", f"name it {p.id}.<language>.yaml")])
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise TranslationError(str(path), [("(file)", f"cannot read it: {e}")]) from None
    problems = check(p, data, m["lang"])
    if problems:
        raise TranslationError(str(path), problems)
    return Translator.build(p, m["lang"], data)


def shipped_dir(p: Protocol) -> Path | None:
    """The shipped translations of ``p`` when it is a shipped protocol as shipped (None for
    a protocol changed in Python: the shipped texts would not fit it)."""
    if p.id in shipped_protocols() and load_protocol(p.id).fingerprint() == p.fingerprint():
        return TRANSLATION_DIR
    return None


def translators(p: Protocol, directory: Path | None) -> dict[str, Translator]:
    """language -> translator of every language of ``p`` in ``directory`` (English first;
    only English without a directory).

    >>> from protocols import load_protocol, translations_dir, translators
    >>> protocol = load_protocol("tominaga-replication")
    >>> sorted(translators(protocol, translations_dir(protocol.id)))
    ['en', 'ja']
    >>> list(translators(protocol, None))
    ['en']
    """
    out = {SOURCE_LANGUAGE: Translator(SOURCE_LANGUAGE)}
    for lang, path in translation_files(p.id, directory).items() if directory else ():
        out[lang] = load(p, path)
    return out


@dataclass
class Translator:
    """Shows texts in ``language`` (module docstring).

    >>> from protocols import load_protocol, translations_dir, translators
    >>> protocol = load_protocol("tominaga-replication")
    >>> ja = translators(protocol, translations_dir(protocol.id))["ja"]
    >>> ja.name, ja.ui("missing.mark"), ja.level("Yes")
    ('日本語', 'この質問にお答えください。', 'あり')
    """

    language: str
    by_text: dict[str, str] = field(default_factory=dict)
    levels: dict[str, str] = field(default_factory=dict)  # an item's options, by English
    interface: dict[str, str] = field(default_factory=dict)
    units: dict[str, Any] = field(default_factory=dict)
    conflicts: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return language_name(self.language)

    @property
    def english(self) -> bool:
        return self.language == SOURCE_LANGUAGE

    @classmethod
    def build(cls, p: Protocol, language: str, data: dict[str, Any]) -> Translator:
        """The translator of a checked file's ``data`` for protocol ``p``."""
        t = cls(language, interface={**INTERFACE, **FILLS, **data.get("interface", {})})
        english = source(p)
        for section in ("texts", "scenario"):
            for k, en in english[section].items():
                value = data.get(section, {}).get(k)
                if k.endswith(".unit") and section == "scenario":
                    t.units[en] = value
                elif isinstance(en, list) and isinstance(value, list):
                    levels = k.endswith(".levels") and section == "scenario"
                    for e, v in zip(en, value, strict=False):
                        t._pair(e, v, t.levels if levels else None)
                elif isinstance(en, str) and isinstance(value, str):
                    t._pair(en, value.strip())
        tx = data.get("texts", {})
        if "consent" in tx:
            t._pair(p.consent_text(), tx["consent"].strip().replace("{plans}", t._plans(p)))
        if "plan_view.text" in tx:
            for of in range(1, MAX_PLANS_SHOWN + 1):
                for k in range(1, of + 1):
                    t._pair(p.plan_view.plan_text(k, of), tx["plan_view.text"].strip().format(
                        ordinal=t.ui("fill.ordinal", n=k), number=k, of=of))
        for of in range(1, MAX_PLANS_SHOWN + 1):
            for k in range(1, of + 1):
                t._pair(INTERFACE["title.plan"].format(number=k, of=of),
                        t.ui("title.plan", number=k, of=of))
        for key, en in INTERFACE.items():  # the interface texts a page's payload carries
            if key.split(".")[0] in _PAYLOAD_INTERFACE and not _fields(en):
                t._pair(en, t.ui(key))
        return t

    def _pair(self, english: str, translated: str, into: dict[str, str] | None = None) -> None:
        into = self.by_text if into is None else into
        english = english.strip()
        known = into.get(english)
        if known is not None and known != translated:
            self.conflicts.append(f"{english!r} is translated both as {known!r} and as "
                                  f"{translated!r}; a page can show only one")
        into.setdefault(english, translated)

    def _plans(self, p: Protocol) -> str:
        n = max(p.plans_per_participant(a.id) for a in p.arms)
        key = "fill.plans_up_to" if p.promised_plans().startswith("up to ") else "fill.plans"
        return self.ui(key, n=n)

    # ---- showing ------------------------------------------------------------------------
    def text(self, english: str) -> str:
        """The translation of an English text as shown (itself in English or if unknown)."""
        if self.english or not english:
            return english
        return self.by_text.get(english.strip(), english)

    def level(self, english: str) -> str:
        """An item's option (a scenario level: "Yes" of an item may differ from a rating's)."""
        if self.english:
            return english
        key = english.strip()
        found = self.levels.get(key) or self.levels.get(key[:1].lower() + key[1:])
        return found if found is not None else self.text(english)

    def ui(self, key: str, **fields: object) -> str:
        """The interface text ``key`` in this language, its fields filled in."""
        text = (self.interface or INTERFACE).get(key, INTERFACE.get(key, FILLS.get(key, key)))
        return text.format(**fields) if fields else text

    def number(self, value: float, unit: str, decimals: int, english: str) -> str:
        """A number in display units with its unit, for this language (``english``: how it
        is shown in English, kept as is in English)."""
        if self.english:
            return english
        spec = self.units.get(unit)
        if isinstance(spec, dict):
            amount = value * float(spec.get("factor", 1))
            return format_currency(amount, spec["currency"], locale=self.language)
        shown = format_decimal(value, format="#,##0" + ("." + "0" * decimals if decimals else ""),
                               locale=self.language)
        text = spec.format(value=shown) if isinstance(spec, str) else f"{shown} {unit}".strip()
        meaning = _MEANING.search(english)  # a code's meaning (DisplayMap.meaning)
        return text + (f" ({self.text(meaning[1])})" if meaning else "")

    def unit(self, unit: str) -> str:
        """The unit a number is typed in ("million JPY": 百万円)."""
        if self.english:
            return unit
        spec = self.units.get(unit)
        if isinstance(spec, dict):
            return str(spec.get("entry", spec["currency"]))
        return spec.replace("{value}", "").strip() if isinstance(spec, str) else unit

    def moment(self, at: datetime) -> str:
        """A time (UTC) for this language ("2026年12月10日 22:50:00 UTC")."""
        return format_datetime(at, format="long", tzinfo=UTC, locale=self.language)

    def date(self, day: Date) -> str:
        """A date for this language, in its long form (English: day, month name, year)."""
        return format_date(day, format="long", locale=self.language)
