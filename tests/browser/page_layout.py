"""What the browser tests measure of a page's layout."""

from __future__ import annotations

from playwright.sync_api import Page

PHONE_WIDTH = 375


def page_width(page: Page) -> tuple[int, list[str]]:
    """The document's width, and the first elements that stick out past a phone's width."""
    width: int = page.evaluate("document.documentElement.scrollWidth")
    wide: list[str] = page.evaluate(
        "[...document.querySelectorAll('main *')]"
        f".filter(e => e.getBoundingClientRect().right > {PHONE_WIDTH + 1})"
        ".slice(0, 5).map(e => e.tagName + '#' + e.id + '.' + e.className)"
    )
    return width, wide
