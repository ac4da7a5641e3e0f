"""A bundle's requirements.txt, read strictly: one requirement per line in the
grammar of PEP 508 as the ``packaging`` library reads it (a name, extras,
version specifiers, a marker), comments and blank lines. Nothing else that pip
would accept: no URLs (``name @ https://…``), no paths or archive names, no
options (``-r``, ``-c``, ``-e``, ``--index-url``, ``--hash``…), no line
continuations, no ``${VARIABLES}`` (pip would fill them in from the server's
environment). So a bundle can only name packages of the index the server is
configured with; it can never make the server fetch an address of its choosing.

The environment is then built from the normal form of each line
(:func:`normal_lines`), not from the file as written.
"""
from __future__ import annotations

import re

from packaging.requirements import InvalidRequirement, Requirement

from shareval.formats.errors import Problems

MAX_LINES = 500
MAX_CHARS = 300
_COMMENT = re.compile(r"(^|\s)#.*$")
_ARCHIVE = re.compile(r"\.(whl|zip|tar|tgz|tar\.gz|tar\.bz2|tar\.xz|egg)$", re.I)


def parse(text: str, name: str, problems: Problems) -> list[Requirement]:
    """The requirements of ``text`` (the file ``name``); each refusal is a
    problem naming ``name:LINE``."""
    out: list[Requirement] = []
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        problems.fatal(name, None, "requirements", f"more than {MAX_LINES} lines")
        return out
    for no, raw in enumerate(lines, 1):
        line = _COMMENT.sub("", raw).strip()
        if not line:
            continue
        why = _refusal(line)
        if why:
            problems.add(name, no, "requirement", why)
            continue
        try:
            req = Requirement(line)
        except InvalidRequirement as e:
            problems.add(name, no, "requirement",
                         f"not a requirement such as 'numpy>=1.26' ({str(e).splitlines()[0]})")
            continue
        if req.url:
            problems.add(name, no, "requirement", "URLs and paths are not allowed: name a "
                                                  "package of the index, e.g. 'numpy>=1.26'")
        elif _ARCHIVE.search(req.name):
            problems.add(name, no, "requirement", f"{req.name!r} looks like a file; name a "
                                                  "package of the index instead")
        else:
            out.append(req)
    return out


def _refusal(line: str) -> str:
    if len(line) > MAX_CHARS:
        return f"longer than {MAX_CHARS} characters"
    if line.startswith("-"):
        return (f"pip options are not allowed ({line.split()[0]}): only requirements "
                f"such as 'numpy>=1.26'")
    if line.endswith("\\"):
        return "line continuations are not allowed: one requirement per line"
    if "$" in line:
        return "'$' is not allowed (pip would read the server's environment variables)"
    if "://" in line or line.startswith((".", "/", "~")):
        return "URLs and paths are not allowed: name a package of the index, e.g. 'numpy>=1.26'"
    return ""


def normal_lines(text: str, name: str = "requirements.txt") -> list[str]:
    """The normal form of each requirement (``str(Requirement)``), what pip is
    given; raises ValueError with the problems if the text is refused."""
    problems = Problems()
    reqs = parse(text, name, problems)
    if problems:
        raise ValueError("\n".join(str(p) for p in problems.items))
    return [str(r) for r in reqs]
