"""Whole numbers as files and ids write them: ASCII digits only. ``str.isdigit()``
also takes '²' (which int() refuses) and other scripts' digits (which int() reads),
so a check by it either crashes or turns an id into a number."""
from __future__ import annotations


def is_digits(text: str) -> bool:
    """One or more of 0-9 and nothing else."""
    return text.isascii() and text.isdigit()


def natural_key(text: str) -> tuple:
    """Sort key: numeric ids first, in number order ("2" before "10"); then the others."""
    return (0, int(text), "") if is_digits(text) else (1, 0, text)
