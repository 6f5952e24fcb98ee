"""Markdown to safe HTML, for chat messages and document previews.

markdown-it-py renders CommonMark with raw HTML disabled; nh3 (the Ammonia sanitiser) then keeps
only a small allow-list of tags and attributes, so script, event handlers and ``javascript:``
links never reach a page even if the renderer were to let them through.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import nh3
from django.conf import settings
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "breaks": True}).enable(
    ["table", "strikethrough"]
)
_REMOTE = ("http:", "https:", "//")


def _image(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """An image from another site becomes a link to it: a reader's browser fetches nothing
    from an address a writer chose (which would tell that site who reads, from where and
    when) unless the administrator allows remote images (``MARKDOWN_REMOTE_IMAGES``, which
    also widens the Content-Security-Policy's img-src)."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    if settings.MARKDOWN_REMOTE_IMAGES or not src.strip().lower().startswith(_REMOTE):
        return self.image(tokens, idx, options, env)
    alt = self.renderInlineAsText(token.children or [], options, env) or "image"
    return (
        f'<a href="{escape(src)}" title="An image on another site, not loaded">'
        f"[image: {escape(alt)}]</a>"
    )


_md.add_render_rule("image", _image)

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
