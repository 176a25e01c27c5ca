"""The README's "Python API" example runs as a doctest (on the quick test artifacts) and
stays within eight statements."""

from __future__ import annotations

import ast
import doctest
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_STATEMENTS = 8


def _api_example() -> tuple[str, int]:
    """The ```python block of the README's "Python API" section and its first line."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Python API", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None, "the Python API section has no python block"
    return block.group(1), text[: text.index(block.group(1))].count("\n") + 1


def test_python_api_example_runs_as_a_doctest(trained_home, tmp_path, monkeypatch) -> None:
    source, line = _api_example()
    monkeypatch.chdir(tmp_path)  # the example writes pilot.duckdb where it runs
    test = doctest.DocTestParser().get_doctest(source, {}, "README Python API",
                                               str(REPO / "README.md"), line)
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    result = runner.run(test)
    assert result.attempted >= 6
    assert result.failed == 0, "the README's Python API example fails (see the output above)"
    assert (tmp_path / "pilot.duckdb").exists()


def test_python_api_example_is_at_most_eight_statements() -> None:
    source, _ = _api_example()
    examples = doctest.DocTestParser().get_examples(source)
    statements = sum(len(ast.parse(e.source).body) for e in examples)
    assert 5 <= statements <= MAX_STATEMENTS
