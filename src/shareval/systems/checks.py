"""Checks shared by the systems' runners and HTTP handlers: request fields and outputs."""
from __future__ import annotations

import json
from pathlib import Path

from ..formats.digits import is_digits


class RequestError(ValueError):
    """A bad request or input: the message lists every problem found."""


def need(body: dict, name: str, kind, problems: list, required=True, default=None):
    if name not in body:
        if required:
            problems.append(f"{name}: missing")
        return default
    value = body[name]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        problems.append(f"{name}: expected {kind.__name__}, found {type(value).__name__}")
        return default
    return value


def strings(body, name, problems, limit=10_000):
    values = need(body, name, list, problems)
    if values is None:
        return []
    bad = [i for i, v in enumerate(values) if not isinstance(v, str)]
    if bad:
        problems.append(f"{name}[{bad[0]}]: expected a string" +
                        (f" ({len(bad)} items are not strings)" if len(bad) > 1 else ""))
    if len(values) > limit:
        problems.append(f"{name}: at most {limit} items per request, found {len(values)}")
    return values


def raise_problems(problems):
    if problems:
        raise RequestError("; ".join(problems))


def pub_id(stem: str):
    return int(stem) if is_digits(stem) else stem


def write_json(path: Path, value) -> None:
    path.write_text(json.dumps(value, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
