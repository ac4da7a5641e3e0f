"""Fact sheets: what each run says about the system that made it.

Every run may carry the standard fields (method name, paper and code links,
resources used, training condition; the description is the run's own) and the
extra fields an organizer declares in the bundle::

    factsheet:
      required: [method, training]             # standard fields a run must fill
      training: [constrained, unconstrained]   # allowed training conditions (optional)
      fields:
        - {name: ensemble, label: Ensemble of models, type: bool, required: true}
        - {name: gpu_hours, type: number}
        - {name: encoder, type: choice, choices: [none, bert, xlmr]}
        - {name: human_in_loop, type: bool, required: true,
           refuse: {value: true, phases: [eval], reason: closed queries allow no human in the loop}}

Types: text, number, integer, bool, url, choice. ``refuse`` turns a declaration into a
rule (MATERIAL 6.5's data-use declarations): a run whose sheet gives ``value`` is
refused in the listed phases (every phase when ``phases`` is left out), with the reason. :func:`clean` checks a sheet
against the schema and returns every problem at once (web form, API and
``shareval submit --factsheet FILE.yaml`` all go through it).
"""
from __future__ import annotations

import re

STANDARD = {"method": "Method name", "paper": "Paper (URL)", "code": "Code (URL)",
            "resources": "Resources used", "training": "Training condition"}
URL_FIELDS = ("paper", "code")
TYPES = ("text", "number", "integer", "bool", "url", "choice")
NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
MAX_TEXT = 2000


def read_schema(node, err) -> dict:
    """The bundle's ``factsheet:`` mapping as a schema; ``err(node, where, msg)`` collects
    problems. An absent section is an empty schema (every field optional)."""
    if node in (None, {}):
        return {}
    if not isinstance(node, dict):
        err(node, "bundle.factsheet", "expected a mapping")
        return {}
    required = node.get("required") or []
    if not isinstance(required, list) or any(r not in STANDARD for r in required):
        err(node, "bundle.factsheet.required",
            f"a list of standard fields: {', '.join(STANDARD)}")
        required = [r for r in required if r in STANDARD] if isinstance(required, list) else []
    training = node.get("training") or []
    if not isinstance(training, list):
        err(node, "bundle.factsheet.training", "a list of training conditions")
        training = []
    fields = []
    for i, f in enumerate(node.get("fields") or []):
        w = f"bundle.factsheet.fields[{i}]"
        if not isinstance(f, dict):
            err(node, w, "expected a mapping")
            continue
        name, kind = str(f.get("name", "")), str(f.get("type", "text"))
        if not NAME.fullmatch(name) or name in STANDARD or name == "description":
            err(f, f"{w}.name", f"{name!r}: use a lower-case identifier that is not a "
                                f"standard field")
            continue
        if kind not in TYPES:
            err(f, f"{w}.type", f"{kind!r}: one of {', '.join(TYPES)}")
            continue
        choices = [str(c) for c in (f.get("choices") or [])]
        if kind == "choice" and not choices:
            err(f, f"{w}.choices", "a choice field needs its choices")
        spec = {"name": name, "label": str(f.get("label") or name), "type": kind,
                "required": f.get("required", False) is True, "choices": choices,
                "help": str(f.get("help", ""))}
        if "refuse" in f:
            spec["refuse"] = _read_refusal(f, spec, f"{w}.refuse", err)
        fields.append(spec)
    return {"required": list(required), "training": [str(t) for t in training],
            "fields": fields}


def _read_refusal(f: dict, spec: dict, where: str, err) -> dict | None:
    r = f.get("refuse")
    keys = {k for k in r if not k.startswith("__")} if isinstance(r, dict) else set()
    if not isinstance(r, dict) or "value" not in r or keys - {"value", "phases", "reason"}:
        err(f, where, "a mapping {value, phases (optional), reason}")
        return None
    problems: list[str] = []
    value = _coerce(spec, r["value"], problems)
    phases = r.get("phases")
    if phases is not None and (not isinstance(phases, list)
                               or not all(isinstance(p, str) for p in phases)):
        problems.append("phases: a list of phase slugs")
    for p in problems:
        err(f, where, p.split(": ", 1)[-1])
    if problems:
        return None
    return {"value": value, "phases": phases, "reason": str(r.get("reason") or "not allowed")}


def _refused(f: dict, value, phase) -> str | None:
    """The refusal of ``value`` for field ``f`` in ``phase`` (a Phase or None), if any."""
    r = f.get("refuse")
    if not r or phase is None or not _same(value, r["value"]):
        return None
    if r["phases"] is not None and phase.slug not in r["phases"]:
        return None
    shown_value = shown(value)
    return f"factsheet.{f['name']}: {shown_value} is not allowed in {phase.title}: {r['reason']}"


def _same(value, refused) -> bool:
    """Whether a declared value is the refused one; words in any case and spacing
    ("YES" is "yes"), so a refusal is not passed by spelling the value another way."""
    if isinstance(value, str) and isinstance(refused, str):
        return " ".join(value.split()).casefold() == " ".join(refused.split()).casefold()
    return value == refused


def _truthy(v) -> bool | None:
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    return {"true": True, "yes": True, "1": True, "on": True,
            "false": False, "no": False, "0": False, "off": False}.get(s)


def _url(v: str) -> bool:
    return re.fullmatch(r"https?://[^\s<>\"]+", v) is not None


def _coerce(f: dict, v, problems: list[str]):
    label, kind = f["name"], f["type"]
    if kind == "bool":
        b = _truthy(v)
        if b is None:
            problems.append(f"factsheet.{label}: true or false, not {v!r}")
        return b
    if kind in ("number", "integer"):
        try:
            x = float(v) if kind == "number" else int(str(v).strip())
        except (TypeError, ValueError):
            problems.append(f"factsheet.{label}: {'a number' if kind == 'number' else 'an integer'}"
                            f", not {str(v)[:50]!r}")
            return None
        if kind == "number" and x != x:
            problems.append(f"factsheet.{label}: not a number")
            return None
        return x
    s = str(v).strip()[:MAX_TEXT]
    if kind == "url" and not _url(s):
        problems.append(f"factsheet.{label}: an http(s) URL, not {s[:80]!r}")
    if kind == "choice" and s not in f["choices"]:
        problems.append(f"factsheet.{label}: one of {', '.join(f['choices'])}, not {s[:50]!r}")
    return s


def _empty(v) -> bool:
    return v is None or (isinstance(v, str) and not v.strip())


def clean(schema: dict, data: dict | None, required: bool = True,
          phase=None) -> tuple[dict, list[str]]:
    """(the sheet as stored, problems). Unknown keys are problems too, so a typo in a
    ``--factsheet`` file is not lost silently. ``required=False`` (organizers'
    baselines) checks the values given but requires none. ``phase``: the run's phase,
    where a field's ``refuse`` rule applies."""
    data = dict(data or {})
    data.pop("description", None)              # the run's own description field
    schema = schema or {}
    problems: list[str] = []
    out: dict = {}
    extras = {f["name"]: f for f in schema.get("fields", [])}
    for k in data:
        if k not in STANDARD and k not in extras:
            problems.append(f"factsheet.{k}: not a field of this competition's fact sheet "
                            f"(fields: {', '.join([*STANDARD, *extras])})")
    for name in STANDARD:
        v = data.get(name)
        if _empty(v):
            if required and name in schema.get("required", []):
                problems.append(f"factsheet.{name}: required ({STANDARD[name].lower()})")
            continue
        kind = "url" if name in URL_FIELDS else "text"
        spec = {"name": name, "type": kind}
        if name == "training" and schema.get("training"):
            spec = {"name": name, "type": "choice", "choices": schema["training"]}
        out[name] = _coerce(spec, v, problems)
    for name, f in extras.items():
        v = data.get(name)
        if _empty(v):
            if required and f["required"]:
                problems.append(f"factsheet.{name}: required ({f['label']})")
            continue
        out[name] = _coerce(f, v, problems)
        why = _refused(f, out[name], phase)
        if why:
            problems.append(why)
    return out, problems


def fields(schema: dict) -> list[dict]:
    """Every field a form shows, standard ones first, with its kind and choices."""
    schema = schema or {}
    out = []
    for name, label in STANDARD.items():
        choices = schema.get("training", []) if name == "training" else []
        out.append({"name": name, "label": label,
                    "type": "choice" if choices else ("url" if name in URL_FIELDS else "text"),
                    "choices": choices, "required": name in schema.get("required", []),
                    "help": ""})
    return out + [dict(f) for f in schema.get("fields", [])]


def from_post(schema: dict, post) -> dict:
    """A sheet from a web form's ``fs_<name>`` fields (unchecked boxes are false)."""
    out = {}
    for f in fields(schema):
        key = "fs_" + f["name"]
        if f["type"] == "bool":
            if key in post or f["required"]:
                out[f["name"]] = "true" if post.get(key) else "false"
        elif post.get(key, "").strip():
            out[f["name"]] = post.get(key)
    return out


def shown(value) -> str:
    """A sheet value as pages show it: yes/no, numbers as given (4.5, not 4.5000)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)
