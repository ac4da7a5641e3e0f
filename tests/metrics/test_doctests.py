"""The worked examples in the metric docstrings run with the tests (`make test`), and
every metric module has at least one."""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import shareval.metrics

MODULES = sorted(m.name for m in pkgutil.iter_modules(shareval.metrics.__path__))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"shareval.metrics.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0, f"metrics/{name}.py has no worked example in a docstring"
