"""Fixed decision rules over a scenario's features: a small expression language.

A rule is one expression, favourable where it is true, e.g.

    income >= 4 * loan_amount and education >= 'bachelor'

Names are features; a continuous feature stands for its value in display units, a level
feature for its level (compared with a level label in quotes, or a list of labels with
``in``; ordinal comparisons follow the order of its ``levels``). Allowed: numbers, strings,
``+ - * /``, comparisons (chained too), ``and or not``, ``in`` / ``not in`` a list of labels,
``abs(.)``, ``min(., .)``, ``max(., .)``, parentheses. Nothing else of Python is evaluated:
the text is parsed with ``ast`` and every node kind is checked first, so a rule is data, not
code. Evaluation is vectorized over numpy arrays (one value per profile).
"""

from __future__ import annotations

import ast
import difflib
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: np.divide,
}
_CMPOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}
_FUNCS: dict[str, Callable[..., Any]] = {"abs": np.abs, "min": np.minimum, "max": np.maximum}


class RuleSyntaxError(ValueError):
    """A rule that does not parse, names an unknown feature or level, or uses a construct
    outside the language."""


@dataclass(frozen=True)
class Rule:
    """A parsed rule: ``decide(values)`` -> bool array (favourable)."""

    text: str
    tree: ast.Expression
    levels: Mapping[str, tuple[str, ...]]

    @property
    def features(self) -> tuple[str, ...]:
        """The features the rule reads, in order of appearance."""
        seen: list[str] = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Name) and node.id not in _FUNCS and node.id not in seen:
                seen.append(node.id)
        return tuple(seen)

    def decide(self, values: Mapping[str, np.ndarray]) -> np.ndarray:
        """Favourable (bool, shape (n,)) for profiles given as feature -> display values
        (level features: codes 0..k-1)."""
        n = len(next(iter(values.values()))) if values else 1
        out = _eval(self.tree.body, values, self.levels)
        return np.broadcast_to(np.asarray(out, dtype=bool), (n,)).copy()


def parse_rule(text: str, levels: Mapping[str, tuple[str, ...]]) -> Rule:
    """Parse and check a rule; ``levels`` maps every feature to its level labels (empty for
    a continuous feature). Raises RuleSyntaxError naming the problem."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise RuleSyntaxError(f"the rule does not parse: {e.msg} (column {e.offset})") from None
    _check(tree.body, levels)
    return Rule(text, tree, levels)


def _check(node: ast.AST, levels: Mapping[str, tuple[str, ...]]) -> None:
    if isinstance(node, ast.BoolOp):
        for v in node.values:
            _check(v, levels)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub, ast.UAdd)):
        _check(node.operand, levels)
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        _check(node.left, levels)
        _check(node.right, levels)
    elif isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        for op, a, b in zip(node.ops, operands[:-1], operands[1:], strict=True):
            _check_comparison(op, a, b, levels)
        for o in operands:
            if not _is_label(o) and not isinstance(o, (ast.List, ast.Tuple)):
                _check(o, levels)
    elif isinstance(node, ast.Name):
        if node.id not in levels:
            close = difflib.get_close_matches(node.id, list(levels), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise RuleSyntaxError(f"the rule names unknown feature {node.id!r}{hint} "
                                  f"(features: {', '.join(levels)})")
    elif isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        pass
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in _FUNCS and not node.keywords:
        if len(node.args) != (1 if node.func.id == "abs" else 2):
            raise RuleSyntaxError(f"{node.func.id}() takes {1 if node.func.id == 'abs' else 2} "
                                  "argument(s)")
        for a in node.args:
            _check(a, levels)
    elif _is_label(node):
        raise RuleSyntaxError(f"the label {node.value!r} must be compared with a level feature")
    else:
        raise RuleSyntaxError(f"the rule uses {ast.unparse(node)!r}, which the rule language "
                              "does not allow (numbers, features, + - * /, comparisons, and, "
                              "or, not, in, abs, min, max)")


def _is_label(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _check_comparison(op: ast.cmpop, a: ast.AST, b: ast.AST,
                      levels: Mapping[str, tuple[str, ...]]) -> None:
    """Labels only beside a level feature, and only labels of its levels."""
    if isinstance(op, (ast.In, ast.NotIn)):
        if not (isinstance(a, ast.Name) and isinstance(b, (ast.List, ast.Tuple))):
            raise RuleSyntaxError("'in' compares a level feature with a list of its labels")
        _check(a, levels)
        for item in b.elts:
            _check_label(a.id, item, levels)
        return
    for feature, other in ((a, b), (b, a)):
        if _is_label(other):
            if not isinstance(feature, ast.Name):
                raise RuleSyntaxError(f"the label {other.value!r} must be compared with a "
                                      "level feature")
            _check(feature, levels)
            _check_label(feature.id, other, levels)


def _check_label(feature: str, node: ast.AST, levels: Mapping[str, tuple[str, ...]]) -> None:
    labels = levels.get(feature, ())
    if not labels:
        raise RuleSyntaxError(f"{feature!r} is continuous; compare it with numbers (display "
                              "units), not labels")
    if not _is_label(node) or node.value not in labels:
        shown = ast.unparse(node)
        raise RuleSyntaxError(f"{shown} is not a level of {feature!r} (levels: "
                              f"{', '.join(labels)})")


def _code(feature: str, label: str, levels: Mapping[str, tuple[str, ...]]) -> int:
    return levels[feature].index(label)


def _eval(node: ast.AST, values: Mapping[str, np.ndarray],
          levels: Mapping[str, tuple[str, ...]]) -> Any:
    if isinstance(node, ast.BoolOp):
        parts = [np.asarray(_eval(v, values, levels), dtype=bool) for v in node.values]
        combine = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
        out = parts[0]
        for p in parts[1:]:
            out = combine(out, p)
        return out
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, values, levels)
        if isinstance(node.op, ast.Not):
            return np.logical_not(v)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)](_eval(node.left, values, levels),
                                      _eval(node.right, values, levels))
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        out: Any = True
        for op, a, b in zip(node.ops, operands[:-1], operands[1:], strict=True):
            out = np.logical_and(out, _compare(op, a, b, values, levels))
        return out
    if isinstance(node, ast.Name):
        return np.asarray(values[node.id], dtype=float)
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Call):
        return _FUNCS[node.func.id](*(_eval(a, values, levels) for a in node.args))
    raise RuleSyntaxError(f"cannot evaluate {ast.unparse(node)!r}")  # excluded by _check


def _compare(op: ast.cmpop, a: ast.AST, b: ast.AST, values: Mapping[str, np.ndarray],
             levels: Mapping[str, tuple[str, ...]]) -> Any:
    if isinstance(op, (ast.In, ast.NotIn)):
        codes = [_code(a.id, item.value, levels) for item in b.elts]
        hit = np.isin(np.asarray(values[a.id]), codes)
        return hit if isinstance(op, ast.In) else ~hit
    left = _operand(a, b, values, levels)
    right = _operand(b, a, values, levels)
    return _CMPOPS[type(op)](left, right)


def _operand(node: ast.AST, other: ast.AST, values: Mapping[str, np.ndarray],
             levels: Mapping[str, tuple[str, ...]]) -> Any:
    if _is_label(node):
        return float(_code(other.id, node.value, levels))
    return _eval(node, values, levels)
