"""The `math_answer` builtin reward: is the completion's final answer the dataset's answer?

The answer a completion gives, in this order:
    the content of its last `\\boxed{...}` (braces nested),
    else the number after its last `#### ` (GSM8K's marker),
    else its last number (`1,000` -> 1000, `-3.5`, `3/4`).
The dataset's answer: its \boxed{} or `#### n` when it has one (a GSM8K solution gives 18), else the whole field.

Two answers are equal as numbers (1e-9 relative), as exact fractions (`0.75` = `3/4`), or, with
sympy, as expressions (`\\frac{1}{2}x` = `x/2`, `2\\sqrt{2}` = `sqrt(8)`). 1.0 when equal, else 0.0
(no answer found scores 0).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any, Mapping

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:/\d+)?|-?\.\d+")
_HASHES = re.compile(r"####\s*([^\n]+)")
SYMPY_TIMEOUT_CHARS = 200  # longer expressions are compared as text only (sympy can be slow on adversarial input)


def last_boxed(text: str) -> str | None:
    """Content of the last \\boxed{...} or \\fbox{...}, braces balanced; None when there is none."""
    start = max(text.rfind("\\boxed{"), text.rfind("\\fbox{"))
    if start < 0:
        return None
    i = text.index("{", start) + 1
    depth, j = 1, i
    while j < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        j += 1
    return text[i : j - 1].strip() if depth == 0 else None


def extract_answer(text: str, last_number: bool = True) -> str | None:
    """The answer `text` gives; with `last_number` False, a text with neither marker is its own answer."""
    boxed = last_boxed(text)
    if boxed is not None:
        return boxed
    marked = _HASHES.findall(text)
    if marked:
        numbers = _NUMBER.findall(marked[-1])
        return numbers[0] if numbers else marked[-1].strip()
    if not last_number:
        return text.strip() or None
    numbers = _NUMBER.findall(text)
    return numbers[-1] if numbers else None


def as_fraction(text: str) -> Fraction | None:
    cleaned = text.strip().replace(",", "").replace("$", "").replace("\\%", "").replace("%", "").rstrip(".")
    frac = re.fullmatch(r"\\[dt]?frac\{(-?\d+)\}\{(-?\d+)\}", cleaned)
    if frac:
        cleaned = f"{frac.group(1)}/{frac.group(2)}"
    try:
        return Fraction(cleaned)
    except (ValueError, ZeroDivisionError):
        return None


def _latex_to_sympy_text(text: str) -> str:
    s = text.replace("\\left", "").replace("\\right", "").replace("\\cdot", "*").replace("\\times", "*")
    s = re.sub(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}", r"((\1)/(\2))", s)
    s = re.sub(r"\\sqrt\{([^{}]*)\}", r"sqrt(\1)", s)
    s = s.replace("\\pi", "pi").replace("{", "(").replace("}", ")").replace("^", "**").replace("\\", "")
    return s


def sympy_equal(a: str, b: str) -> bool:
    if len(a) > SYMPY_TIMEOUT_CHARS or len(b) > SYMPY_TIMEOUT_CHARS:
        return False
    try:
        import sympy
        from sympy.parsing.sympy_parser import implicit_multiplication_application, parse_expr, standard_transformations
    except ImportError:  # sympy is a runtime dependency; without it only numbers and fractions compare
        return False
    transformations = standard_transformations + (implicit_multiplication_application,)
    try:
        left = parse_expr(_latex_to_sympy_text(a), transformations=transformations, evaluate=True)
        right = parse_expr(_latex_to_sympy_text(b), transformations=transformations, evaluate=True)
        return bool(sympy.simplify(left - right) == 0)
    except Exception:  # noqa: BLE001 - unparsable text is simply not equal
        return False


def answers_equal(got: str, expected: str) -> bool:
    if " ".join(got.split()) == " ".join(expected.split()):
        return True
    a, b = as_fraction(got), as_fraction(expected)
    if a is not None and b is not None:
        return a == b or abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(b)))
    return sympy_equal(got, expected)


def math_answer(prompt: str, completion: str, row: Mapping[str, Any], params: Mapping[str, Any]) -> float:
    """1 if the completion's final answer (\\boxed{}, #### n, or its last number) equals the row's answer
    as a number, a fraction or (sympy) an expression; else 0."""
    got = extract_answer(completion)
    expected_raw = str(row[params["field"]])
    expected = extract_answer(expected_raw, last_number=False)
    if got is None or not expected:
        return 0.0
    return 1.0 if answers_equal(got, expected) else 0.0
