from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from collab.lib.markdown import render_markdown

ATTACKS = [
    "<script>alert(1)</script>",
    "before <script src=https://evil.example/x.js></script> after",
    "<img src=x onerror=alert(1)>",
    '<a href="https://example.org" onclick="alert(1)">click</a>',
    "<iframe src=https://evil.example></iframe>",
    "<svg onload=alert(1)></svg>",
    "<style>body{display:none}</style>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](  javascript:alert(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "![pic](javascript:alert(1))",
    "<javascript:alert(1)>",
    '[click](https://example.org "x\\" onmouseover=\\"alert(1)")',
    "```\n<script>alert(1)</script>\n```",
]


class _Elements(HTMLParser):
    """Collects the elements and attributes a browser would build from the HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))


def _elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Elements()
    parser.feed(html)
    parser.close()
    return parser.elements


@pytest.mark.parametrize("text", ATTACKS)
def test_injected_html_and_scripts_are_inert(text):
    elements = _elements(render_markdown(text))

    assert {tag for tag, _ in elements} <= {"p", "a", "img", "pre", "code", "br"}
    for _, attrs in elements:
        assert not [name for name in attrs if name.startswith("on")]
        for name in ("href", "src"):
            if attrs.get(name) is not None:
                assert re.match(r"(https?|mailto):", attrs[name] or "")


def test_raw_html_is_shown_as_text():
    html = render_markdown("<b>bold?</b> <script>alert(1)</script>")

    assert html == "<p>&lt;b&gt;bold?&lt;/b&gt; &lt;script&gt;alert(1)&lt;/script&gt;</p>\n"


def test_common_markdown_renders():
    html = render_markdown("# Plan\n\n**bold**, *em* and `code`\n\n- one\n- two\n\n> quoted")

    assert "<h1>Plan</h1>" in html
    assert "<strong>bold</strong>" in html
    assert "<em>em</em>" in html
    assert "<code>code</code>" in html
    assert "<ul>\n<li>one</li>\n<li>two</li>\n</ul>" in html
    assert "<blockquote>" in html


def test_code_blocks_keep_their_content_escaped():
    html = render_markdown("```python\nif a < b and c > d:\n    pass\n```")

    assert html.startswith("<pre><code>")
    assert "if a &lt; b and c &gt; d:" in html


def test_tables_render():
    html = render_markdown("| a | b |\n|---|---|\n| 1 | 2 |")

    assert "<table>" in html
    assert "<th>a</th>" in html
    assert "<td>2</td>" in html


def test_links_keep_safe_urls_and_get_a_safe_rel():
    html = render_markdown(
        "[docs](https://example.org/a?b=1 'Docs') and [mail](mailto:a@example.org)"
    )

    assert (
        '<a href="https://example.org/a?b=1" title="Docs" rel="noopener noreferrer nofollow">'
        in html
    )
    assert 'href="mailto:a@example.org"' in html


def test_single_newlines_become_line_breaks():
    assert render_markdown("one\ntwo") == "<p>one<br>\ntwo</p>\n"
