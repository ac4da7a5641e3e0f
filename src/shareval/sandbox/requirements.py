"""A bundle's requirements.txt, read strictly: one requirement per line in the
grammar of PEP 508 as the ``packaging`` library reads it (a name, extras,
version specifiers, a marker), comments and blank lines. Nothing else that pip
would accept: no URLs (``name @ https://…``), no paths or archive names, no
options (``-r``, ``-c``, ``-e``, ``--index-url``, ``--hash``…), no line
continuations, no ``${VARIABLES}`` (pip would fill them in from the server's
environment). So a bundle can only name packages of the index the server is
configured with; it can never make the server fetch an address of its choosing.

The grammar is read as an allow-list: a PEP 508 name, extras, version
specifiers whose versions are PEP 440 versions (``===``, arbitrary equality,
takes any string and is refused), and a marker. A line with a ``/`` or ``\\``,
or ending like an archive pip would open as a local file, is refused whatever
it parses as. The environment is then built from a line rebuilt from these
parts (:func:`normal_lines`), never from the file as written.
"""
from __future__ import annotations

import re

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from shareval.formats.errors import Problems

MAX_LINES = 500
MAX_CHARS = 300
_COMMENT = re.compile(r"(^|\s)#.*$")
# what pip opens as a local archive when a line ends so (pip's ARCHIVE_EXTENSIONS), and eggs
_ARCHIVE = re.compile(r"\.(zip|whl|tar\.bz2|tbz|tar\.gz|tgz|tar|tar\.xz|txz|tlz|tar\.lz|"
                      r"tar\.lzma|egg)\s*$", re.I)
OPERATORS = ("==", "!=", "<=", ">=", "<", ">", "~=")


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
        why = _parts_refusal(req)
        if why:
            problems.add(name, no, "requirement", why)
        else:
            out.append(req)
    return out


def _parts_refusal(req: Requirement) -> str:
    if req.url:
        return "URLs and paths are not allowed: name a package of the index, e.g. 'numpy>=1.26'"
    if _ARCHIVE.search(req.name):
        return f"{req.name!r} looks like a file; name a package of the index instead"
    for spec in req.specifier:
        if spec.operator not in OPERATORS:
            return (f"'{spec.operator}' is not allowed: use one of {', '.join(OPERATORS)} "
                    f"with a version")
        try:
            Version(spec.version.removesuffix(".*"))
        except InvalidVersion:
            return f"{spec.version!r} is not a version"
    return ""


def rebuilt(req: Requirement) -> str:
    """The line pip is given, made from the parsed parts only."""
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    specs = ",".join(sorted(str(s) for s in req.specifier))
    marker = f"; {req.marker}" if req.marker else ""
    return f"{req.name}{extras}{specs}{marker}"


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
    if _path_like(line) or line.startswith("~"):
        return "URLs and paths are not allowed: name a package of the index, e.g. 'numpy>=1.26'"
    return ""


def _path_like(line: str) -> bool:
    """Whether pip could take the line for a local path or archive: pip looks at the
    part before the marker (';') for a path or an archive's name."""
    before = line.split(";", 1)[0].strip()
    return "/" in line or "\\" in line or before.startswith(".") or bool(_ARCHIVE.search(before)) \
        or bool(_ARCHIVE.search(line))


def normal_lines(text: str, name: str = "requirements.txt") -> list[str]:
    """The normal form of each requirement (``str(Requirement)``), what pip is
    given; raises ValueError with the problems if the text is refused."""
    problems = Problems()
    reqs = parse(text, name, problems)
    if problems:
        raise ValueError("\n".join(str(p) for p in problems.items))
    lines = [rebuilt(r) for r in reqs]
    for line in lines:                  # what pip would take for a path or an archive
        if _path_like(line):
            raise ValueError(f"{name}: requirement: {line!r} cannot be given to pip")
    return lines
