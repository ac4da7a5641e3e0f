"""Task families, registered by name: ``shareval.tasks.get("trec").score(ref, sub)``."""
from __future__ import annotations

from .base import Option, Result, Task, UnitStats  # noqa: F401

_REGISTRY: dict[str, Task] = {}
_MODULES = ("rcc", "svident", "trec", "classification", "material", "program", "kbp")


def register(cls):
    """Class decorator: instantiate and register a task under ``cls.name``."""
    inst = cls()
    if inst.name in _REGISTRY:
        raise ValueError(f"task {inst.name!r} registered twice")
    _REGISTRY[inst.name] = inst
    return cls


def _load_all() -> None:
    # importlib caches modules, so this is cheap after the first call; a flag
    # would be wrong when one task module was imported directly beforehand.
    import importlib
    for m in _MODULES:
        importlib.import_module(f"{__name__}.{m}")


def find(name: str) -> Task | None:
    """The task, importing only its module when the name tells which; None if unknown."""
    module = name.split("-")[0]
    if module in _MODULES:
        import importlib
        importlib.import_module(f"{__name__}.{module}")
        if name in _REGISTRY:
            return _REGISTRY[name]
    _load_all()
    return _REGISTRY.get(name)


def names() -> list[str]:
    _load_all()
    return sorted(_REGISTRY)


def get(name: str) -> Task:
    task = find(name)
    if task is None:
        raise KeyError(f"unknown task {name!r}; known tasks: {', '.join(sorted(_REGISTRY))}")
    return task
