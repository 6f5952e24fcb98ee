"""The API docs page renders in real Chromium without reaching any other host."""

from __future__ import annotations

import pytest
from playwright.sync_api import Route, sync_playwright

from tests.api.test_openapi import EXPECTED_OPERATIONS

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def test_docs_page_shows_every_operation_offline(live_server) -> None:
    elsewhere: list[str] = []

    def only_our_server(route: Route) -> None:
        if route.request.url.startswith(live_server.url):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page()
            page.route("**/*", only_our_server)
            page.goto(f"{live_server.url}/api/docs")
            page.wait_for_selector(".opblock", timeout=20_000)
            summaries = page.locator(".opblock-summary-path").all_inner_texts()
        finally:
            browser.close()

    assert len(summaries) == len(EXPECTED_OPERATIONS)
    assert elsewhere == []
