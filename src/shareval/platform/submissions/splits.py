"""Public/private split of one evaluation set, as the platform uses it.

A dataset's ``split`` names its private units, either as a list of unit ids
(``split: {private: units.txt}`` in the bundle, one id a line) or as a seeded
hash fraction (``split: {fraction: 0.5, seed: 13}``). What a unit is for each
task family, and the restriction of a reference and a run to one part, are in
``shareval.tasks.splits`` (pure; this module only calls it).

Every run is scored on both parts at scoring time: the public part is the
``Score.result`` that pages show during the phase; the private part is stored
beside it (``Score.private_result``) and shown only once the phase's results
are released (``access.private_released``).

Only tasks with a splitter support a split; the bundle refuses ``split`` for
the others (``rcc-fields-methods``, ``program-*``).
"""
from __future__ import annotations

from shareval.tasks.splits import (SPLITTERS, private_test, score_parts,  # noqa: F401
                                     supported, units)
