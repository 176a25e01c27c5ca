"""The prose of the source explains the code; it does not narrate its history.

Comments, docstrings and options' help (``#`` comments of the YAML and R files too) of the
packages, the scripts and the tests carry no dates, issue numbers, load averages or timing
and speed-up claims: measured figures live in the docs pages (docs/benchmarks.md, docs/reproductions/),
beside the command that measures them. A limit, a period or a target the code sets ("after
5 s", "every 15 s", "<= 500 ms") is a specification, not a measurement, and may stay. A
module's docstring says what the module holds and its math, in at most ``MAX_DOC_LINES``
lines. The checker is tested on planted text.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("engine", "data", "protocols", "analysis", "study_app", "scripts", "tests")
MAX_DOC_LINES = 30
_MONTHS = ("January|February|March|April|May|June|July|August|September|October|November"
           "|December")
# What a number with a time unit may follow and still be a specification (a limit, a period,
# a bound, a sum of the code's own delays), not a measurement.
_SPEC = r"(?<!<= )(?<!>= )(?<!< )(?<!> )(?<!every )(?<!after )(?<!within )(?<!= )(?<!\w)"
PATTERNS = {
    "date": re.compile(rf"\b(19|20)\d\d-[01]\d-[0-3]\d\b|\b({_MONTHS}) (19|20)\d\d\b"
                       rf"|\b\d{{1,2}} ({_MONTHS}) (19|20)\d\d\b"),
    "issue number": re.compile(r"\b[Ii]ssues? #?\d+|\bPR #?\d+|(?<![\w#&/'\"])#\d+\b"),
    "machine load": re.compile(r"\bunder (a )?load\b|\bat load\b|\bload (average )?(of )?~?\d"
                               r"|\bdevelopment machine\b|\bbusy machine\b|\bquiet machine\b"),
    "timing claim": re.compile(_SPEC + r"~?\d[\d,]*(\.\d+)?(-\d+(\.\d+)?)?\s?"
                               r"(ms|s|secs?|seconds|mins?|minutes|hours)\b(?![-(])"),
    "rough duration": re.compile(r"(~|\babout |\btook |\btakes? |\bcosts? )\d[\d,]*(\.\d+)?\s?"
                                 r"(ms|s|secs?|seconds|mins?|minutes|hours)\b"),
    "speed-up claim": re.compile(r"\b(times|x) (faster|slower)\b|\b\d+(\.\d+)?\s?x "
                                 r"(faster|slower|speed-?up)\b"),
    "measurement": re.compile(r"\b[Mm]easured( here| under| on \d| over \d|:)"),
}


def prose(text: str, suffix: str) -> Iterator[tuple[int, str]]:
    """(first line, text) of every comment block and docstring of a source file; a block's
    lines are joined so a claim wrapped across lines is read whole."""
    if suffix != ".py":
        for i, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("#") or " #" in line:
                yield i, line[line.index("#"):]
        return
    block: list[str] = []
    start = last = 0
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type != tokenize.COMMENT:
            continue
        if block and tok.start[0] != last + 1:
            yield start, " ".join(block)
            block = []
        if not block:
            start = tok.start[0]
        block.append(tok.string.lstrip("# "))
        last = tok.start[0]
    if block:
        yield start, " ".join(block)
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield node.body[0].lineno, " ".join(doc.split())
        # an option's help, a command's documentation as much as its docstring
        elif (isinstance(node, ast.keyword) and node.arg == "help"
              and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            yield node.value.lineno, " ".join(node.value.value.split())


# A test's comments describe its data in seconds ("one long pause (100 s), then 1 s pages"):
# there only a rough duration ("about N s") is a timing claim.
TEST_DATA = {"timing claim"}


def findings(text: str, suffix: str = ".py", test: bool = False) -> list[tuple[int, str, str]]:
    """(line, kind, the matched words) of every date, issue number, load or timing claim."""
    return [(line, kind, m.group(0)) for line, words in prose(text, suffix)
            for kind, rx in PATTERNS.items() if not (test and kind in TEST_DATA)
            for m in rx.finditer(words)]


def _sources() -> list[Path]:
    return sorted(p for root in ROOTS for ext in ("py", "R", "yaml")
                  for p in (REPO / root).rglob(f"*.{ext}")
                  if ".recourse-study" not in p.parts and "__pycache__" not in p.parts)


def test_the_source_has_no_dates_issue_numbers_or_timing_claims() -> None:
    found = {str(p.relative_to(REPO)): hits for p in _sources()
             if (hits := findings(p.read_text(encoding="utf-8"), p.suffix,
                                  test=p.relative_to(REPO).parts[0] == "tests"))}
    assert found == {}


def test_module_docstrings_are_short() -> None:
    long = {}
    for p in _sources():
        if p.suffix == ".py":
            doc = ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")), clean=False)
            if doc and len(doc.splitlines()) > MAX_DOC_LINES:
                long[str(p.relative_to(REPO))] = len(doc.splitlines())
    assert long == {}


@pytest.mark.parametrize(("text", "kind"), [
    ("# Security (issue 21): tokens are hashed\nx = 1\n", "issue number"),
    ("# see #47 for why\nx = 1\n", "issue number"),
    ('"""Written 2026-11-27, when the flow changed."""\n', "date"),
    ('"""Since 27 November 2026 the flow is shared."""\n', "date"),
    ("# 20 CRUDS steps: 11.2 s\n# on two threads, 0.75 s on one\nx = 1\n", "timing claim"),
    ("# the 2-core development machine\n# under load\nx = 1\n", "machine load"),
    ('def f():\n    """Ten seeds train 3x faster together."""\n', "speed-up claim"),
    ('"""The fit took 16.4-16.9 s instead of 35.7 s."""\n', "timing claim"),
    ('"""Bitwise the same (measured: 300 steps)."""\n', "measurement"),
    ('x = typer.Option(1, help="One thread: 8.5 s, two: 60 s, under load.")\n', "timing claim"),
])
def test_the_checker_finds_planted_claims(text: str, kind: str) -> None:
    assert kind in {k for _, k, _ in findings(text)}


def test_a_tests_data_may_be_in_seconds_but_not_its_run_time() -> None:
    data = "# p6: one long pause (100 s), then 1 s pages\nx = 1\n"
    assert findings(data, test=True) == [] and findings(data) != []
    assert [k for _, k, _ in findings("# each shape takes about 20 s\nx = 1\n", test=True)] == [
        "rough duration"]


@pytest.mark.parametrize("text", [
    '"""Redirects there after 5 s; the load average is stored with each run."""\n',
    "# p95 <= 500 ms is the target; sampled every 15 s\nx = 1\n",
    "color = '#1f77b4'  # a hex colour, not an issue\n",
    '"""hinge on 2 h - 1, log income = 0.01 min(c, 35)."""\n',
    '"""Every plan measured the same way."""\n',
])
def test_the_checker_leaves_specifications_alone(text: str) -> None:
    assert findings(text) == []
