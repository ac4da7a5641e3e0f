"""Every relative link in README.md, CHANGELOG.md and docs/ points at a file that
exists, and an anchor (``page.md#section``) at a heading of that page.

Links inside code (fenced blocks, `inline`) are not links and are skipped; so
are links with a scheme (https:, mailto:)."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\[[^\]]*\]\(([^()\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")


def pages():
    found = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [p for p in found if p.is_file()]


def prose(text):
    return INLINE_CODE.sub("", FENCE.sub("", text))


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = INLINE_CODE.sub(lambda m: m.group(0)[1:-1], heading.strip()).lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page):
    seen, out = {}, set()
    for line in FENCE.sub("", page.read_text()).splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken_links(page):
    broken = []
    for target in LINK.findall(prose(page.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target} (no heading #{anchor})")
    return broken


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    assert broken_links(page) == []


def test_a_broken_link_is_found(tmp_path):
    (tmp_path / "there.md").write_text("# A section\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](there.md) [ok](there.md#a-section) [web](https://x.org/none.md)\n"
                    "`[code](gone.md)`\n```\n[fenced](gone.md)\n```\n"
                    "[gone](gone.md) [bad anchor](there.md#nothing) [moved](dev/there.md)\n")
    assert broken_links(page) == ["gone.md (no such file)",
                                  "there.md#nothing (no heading #nothing)",
                                  "dev/there.md (no such file)"]


def test_the_readme_links_to_the_developer_records_once_and_they_list_every_record():
    readme = prose((ROOT / "README.md").read_text())
    into_dev = [t for t in LINK.findall(readme) if t.startswith("docs/dev/")]
    assert into_dev == ["docs/dev/README.md"]
    index = LINK.findall((ROOT / "docs" / "dev" / "README.md").read_text())
    records = {p.name for p in (ROOT / "docs" / "dev").glob("*.md")} - {"README.md"}
    assert records - set(index) == set(), "records missing from docs/dev/README.md"
