"""Parsers and validators for every file format; problems carry file:line."""
from .errors import InvalidInput, Problem, Problems  # noqa: F401
