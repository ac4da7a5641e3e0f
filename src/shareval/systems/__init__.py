"""Reference systems, one per task family, each usable three ways:

* as Python functions (``rcc.find_citations``, ``svident.detect``,
  ``svident.disambiguate``, ``material.clir`` ...);
* from the command line: ``shareval run SYSTEM INPUT OUTPUT`` writes a submission
  that passes ``shareval validate``;
* as a JSON-over-HTTP service: ``shareval serve-system SYSTEM`` (see ``serve``).

Everything runs offline on CPU; models ship in ``systems/models``.
"""
from __future__ import annotations

from .registry import SYSTEMS, System, get, names

__all__ = ["SYSTEMS", "System", "get", "names"]
