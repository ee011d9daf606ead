"""The benchmark's definitions live in the repository (docs/definitions.md), the paper is cited
by its arXiv id, and the page's language-track shape is the one ``authpairs data check``
enforces."""

from __future__ import annotations

import re

from doc_blocks import REPO, documents

from authpairs.tracks.language.spec import DOMAIN_COUNTS, DOMAIN_TITLES, SPLIT_SCENARIOS

DEFINITIONS = REPO / "docs" / "definitions.md"
ARXIV = "arXiv:2610.16838"


def test_the_paper_is_cited_by_its_arxiv_id() -> None:
    assert ARXIV in DEFINITIONS.read_text(encoding="utf-8")
    assert ARXIV in (REPO / "README.md").read_text(encoding="utf-8")


def test_no_page_or_docstring_points_at_a_spec_outside_the_repository() -> None:
    spec = re.compile(r"\bSPEC\b")
    sources = [*documents(), *(REPO / "src").rglob("*.py")]
    offenders = [str(p.relative_to(REPO)) for p in sources
                 if spec.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_the_language_shape_on_the_page_is_the_checked_one() -> None:
    text = " ".join(DEFINITIONS.read_text(encoding="utf-8").split())
    for domain, (scenarios, dev, test) in DOMAIN_COUNTS.items():
        assert f"{DOMAIN_TITLES[domain]} {scenarios}/{dev}/{test}" in text, domain
    assert f"{SPLIT_SCENARIOS['dev']} development scenarios" in text
    assert f"{SPLIT_SCENARIOS['test']} test scenarios" in text
