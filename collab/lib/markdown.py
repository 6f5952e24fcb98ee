"""Markdown to safe HTML, for chat messages and document previews.

markdown-it-py renders CommonMark with raw HTML disabled; nh3 (the Ammonia sanitiser) then keeps
only a small allow-list of tags and attributes, so script, event handlers and ``javascript:``
links never reach a page even if the renderer were to let them through.
"""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "breaks": True}).enable(
    ["table", "strikethrough"]
)

_TAGS = {
    "a", "p", "br", "hr", "strong", "em", "del", "s", "code", "pre", "blockquote",
    "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td", "img",
}  # fmt: skip
_ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "ol": {"start"}}


def render_markdown(text: str) -> str:
    """Return sanitised HTML for ``text``; safe to mark as safe in a template."""
    html = _md.render(text)
    return nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
