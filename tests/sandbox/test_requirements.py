"""requirements.txt is read strictly (sandbox/requirements.py): requirements of
the PEP 508 grammar naming packages of the configured index, and nothing that
could make the server fetch an address of the participant's choosing."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from shareval.formats.errors import Problems
from shareval.sandbox.bundle import read_manifest
from shareval.sandbox.requirements import normal_lines, parse

REFUSED = [
    ("evilpkg @ http://127.0.0.1:8103/evilpkg-1.0.tar.gz", "URLs and paths are not allowed"),
    ("evilpkg@https://example.org/e.whl", "URLs and paths are not allowed"),
    ("-r http://127.0.0.1:8102/api/competitions/", "pip options are not allowed (-r)"),
    ("--requirement=other.txt", "pip options are not allowed (--requirement=other.txt)"),
    ("-c constraints.txt", "pip options are not allowed (-c)"),
    ("-e git+https://example.org/x.git#egg=x", "pip options are not allowed (-e)"),
    ("--index-url http://127.0.0.1:9/simple", "pip options are not allowed (--index-url)"),
    ("--extra-index-url=http://127.0.0.1:9/", "pip options are not allowed"),
    ("--find-links /etc", "pip options are not allowed (--find-links)"),
    ("numpy --global-option=build", "not a requirement such as 'numpy>=1.26'"),
    ("numpy==1.26 --hash=sha256:abc", "not a requirement such as 'numpy>=1.26'"),
    ("./localpkg", "URLs and paths are not allowed"),
    ("/tmp/evil.whl", "URLs and paths are not allowed"),
    ("~/evil", "URLs and paths are not allowed"),
    ("git+https://example.org/x.git", "URLs and paths are not allowed"),
    ("evil-1.0.tar.gz", "URLs and paths are not allowed"),
    ("evil-1.0-py3-none-any.whl", "URLs and paths are not allowed"),
    ("evil.egg[x]", "looks like a file"),
    ("numpy==${SHAREVAL_SECRET_KEY}", "'$' is not allowed"),
    ('six; python_version == "${HOME}"', "'$' is not allowed"),
    ("six \\", "line continuations are not allowed"),
    ("nump y", "not a requirement such as 'numpy>=1.26'"),
    ("x" * 400, "longer than 300 characters"),
    # pip reads a line whose name part looks like a path or an archive as a local file,
    # and builds it (its setup.py runs) to learn its metadata
    ("x===/../../../runs/R/output/evil-1.0.tar.gz", "URLs and paths are not allowed"),
    ("x===evil", "'===' is not allowed"),
    ("x===1.0", "'===' is not allowed"),
    ("x==1.0+local.tar.gz", "URLs and paths are not allowed"),
    ("x==1.0+a.tbz ; python_version > '3'", "URLs and paths are not allowed"),
    ("foo.tbz", "URLs and paths are not allowed"),
    ("foo.tar.lzma", "URLs and paths are not allowed"),
    ("x>=1.0\\evil", "URLs and paths are not allowed"),
]


@pytest.mark.parametrize("line,why", REFUSED)
def test_each_refusal_names_the_file_and_line(line, why):
    problems = Problems()
    parse("six==1.17.0\n# a comment\n\n" + line + "\n", "requirements.txt", problems)
    assert len(problems.items) == 1, problems.items
    p = problems.items[0]
    assert (p.file, p.line, p.field) == ("requirements.txt", 4, "requirement")
    assert why in p.message, p.message


def test_what_pip_is_given_is_the_normal_form_of_each_requirement():
    text = ("# pinned\nSix == 1.17.0   # trailing comment\nnumpy>=1.26,<3\n"
            "rich[jupyter] ; python_version >= '3.8'\n\n")
    assert normal_lines(text) == ["Six==1.17.0", "numpy<3,>=1.26",
                                  'rich[jupyter]; python_version >= "3.8"']


def test_a_refused_file_raises_with_every_problem():
    with pytest.raises(ValueError) as e:
        normal_lines("-r a.txt\nok-package\nx @ http://h/x.whl\n")
    assert str(e.value).splitlines() == [
        "requirements.txt:1: requirement: pip options are not allowed (-r): only "
        "requirements such as 'numpy>=1.26'",
        "requirements.txt:3: requirement: URLs and paths are not allowed: name a package "
        "of the index, e.g. 'numpy>=1.26'"]


def test_the_manifest_check_refuses_the_bundle_before_anything_runs():
    files = {"shareval-system.yaml": b"command: python main.py {input} {output}\n"
                                     b"requirements: reqs/pinned.txt\n",
             "reqs/pinned.txt": b"six\nevil @ file:///etc/passwd\n"}
    problems = Problems()
    assert read_manifest(files, problems) is None
    assert [str(p) for p in problems.items] == [
        "reqs/pinned.txt:2: requirement: URLs and paths are not allowed: name a package of "
        "the index, e.g. 'numpy>=1.26'"]


NAMES = st.sampled_from(["six", "x", "numpy", "a.b", "pkg_1", "foo.tar", "x.whl", "e.tgz"])
VERSIONS = st.sampled_from(["1.0", "1.*", "2.0.1", "1.0+local.7", "1.0+a.tar.gz", "0.1.post1",
                            "evil", "../e.tar.gz", "1.0.zip", "3!1.0"])
OPS = st.sampled_from(["==", "!=", ">=", "<=", "<", ">", "~=", "==="])
MARKERS = st.sampled_from(["", "; python_version >= '3.8'", '; sys_platform == "linux"',
                           "; os_name == 'x.tar.gz'", '; platform_release == "a/b"'])


@settings(max_examples=400, deadline=None)
@given(NAMES, st.lists(st.tuples(OPS, VERSIONS), max_size=2), st.sampled_from(["", "[cli]"]),
       MARKERS, st.sampled_from(["", " ", "  # c"]))
def test_pip_never_reads_an_accepted_line_as_a_path_an_archive_or_a_url(name, specs, extras,
                                                                         marker, tail):
    """pip's own tests (pip._internal.req.constructors) decide whether it opens a line
    as a local file: none of the lines given to pip may pass them."""
    constructors = pytest.importorskip("pip._internal.req.constructors")
    from pip._internal.utils.urls import url_to_path  # noqa: F401 -- pip is complete
    line = name + extras + ",".join(op + v for op, v in specs) + (" " + marker if marker
                                                                  else "") + tail
    try:
        given_to_pip = normal_lines(line)
    except ValueError:
        return
    for got in given_to_pip:
        before = got.split(";", 1)[0].strip()
        assert not constructors._looks_like_path(before), got
        assert not constructors.is_archive_file(before), got
        assert not constructors.is_url(before), got
        assert "===" not in got, got
