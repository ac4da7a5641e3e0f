"""The task registry (shareval/tasks/__init__.py): every family by name, a name registered
once, an unknown name refused with the known ones listed, and ``find`` importing only
the module a name points to (the CLI scores one small run without importing the
others: src/shareval/cli.py, ``_task_parser``)."""
from __future__ import annotations

import sys

import pytest

from shareval import tasks
from shareval.tasks.base import Task

EVERY = ["classification", "kbp-relations", "material-clir", "material-domainid", "material-e2e",
         "material-langid", "program", "rcc-citations", "rcc-fields-methods", "rcc-mentions",
         "svident-detection", "svident-disambiguation", "trec"]
FAMILIES = ("rcc", "svident", "trec", "classification", "material", "program",
            "kbp")
DEPENDS = {"svident": {"trec"}}          # SV-Ident's Task 2 takes TREC's ranking conventions


def _family_modules() -> dict:
    return {n: m for n, m in sys.modules.items()
            if n.startswith("shareval.tasks.") and n.split(".")[2] in FAMILIES}


@pytest.fixture
def fresh(monkeypatch):
    """An empty registry with no task module imported; the registry, the modules and
    the package's attributes are put back afterwards (other tests hold their classes)."""
    monkeypatch.setattr(tasks, "_REGISTRY", {})
    for family in FAMILIES:             # the package's attributes, which an import resets
        if hasattr(tasks, family):
            monkeypatch.setattr(tasks, family, getattr(tasks, family))
    saved = _family_modules()
    for name in saved:
        del sys.modules[name]
    yield lambda: {n.split(".")[2] for n in _family_modules()}
    for name in _family_modules():
        del sys.modules[name]
    sys.modules.update(saved)


def test_names_are_every_family_sorted(fresh):
    assert tasks.names() == EVERY
    assert fresh() == set(FAMILIES)


@pytest.mark.parametrize("name", EVERY)
def test_find_imports_only_the_module_a_name_points_to(fresh, name):
    task = tasks.find(name)
    assert isinstance(task, Task) and task.name == name
    family = name.split("-")[0]
    assert fresh() == {family} | DEPENDS.get(family, set())
    assert tasks.get(name) is task


def test_an_unknown_name_is_none_for_find_and_an_error_for_get(fresh):
    assert tasks.find("trec-x") is None and tasks.find("nosuch") is None
    with pytest.raises(KeyError) as err:
        tasks.get("nosuch")
    assert err.value.args[0] == f"unknown task 'nosuch'; known tasks: {', '.join(EVERY)}"
    assert tasks.find("") is None


def test_a_name_registers_once_and_the_class_is_returned(fresh):

    class Dummy(Task):
        name = "dummy-registry-test"
        description = "a task of this test"

    assert tasks.register(Dummy) is Dummy
    inst = tasks._REGISTRY["dummy-registry-test"]
    assert type(inst) is Dummy and tasks.get("dummy-registry-test") is inst
    with pytest.raises(ValueError) as err:
        tasks.register(Dummy)
    assert str(err.value) == "task 'dummy-registry-test' registered twice"
    assert tasks._REGISTRY["dummy-registry-test"] is inst
