"""MATERIAL: CLIR, end to end, DomainID and LangID as detection tasks (evaluation
plan, NIST).

The reference is a pack folder (docs/material.md); a submission is a folder
or ``.tgz`` of ``<ID>.tsv`` files at its root (one folder per query for E2E).
Importing the package registers the four tasks.

- ``base.py``: the pack, reading and checking a submission, relevance, beta;
- ``clir.py``: ``material-clir`` (AQWV variants, ADWV, MQWV, oracle QWV, AUC, DET);
- ``e2e.py``: ``material-e2e`` (summaries and the judges' decisions);
- ``identification.py``: ``material-domainid`` and ``material-langid`` (X1-X4).
"""
from . import clir, e2e, identification  # noqa: F401  (registers the tasks)
