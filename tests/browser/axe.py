"""axe-core, Deque's accessibility engine, run inside a real Chromium page.

axe-core comes from the ``axe-playwright-python`` wheel (a dev dependency), which ships
``axe.min.js``; only that file is used. The test serves it to the page itself: a Playwright route
answers a same-origin path with the file's bytes, and a script tag loads it, so nothing is fetched
from the internet and a Content-Security-Policy that allows the server's own scripts allows it too.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from importlib.resources import files
from typing import Any

from playwright.sync_api import Page, Route

AXE_PATH = "/__tests__/axe-core/axe.min.js"  # no route of the server: only the test's route answers it
IMPACTS = ("critical", "serious", "moderate", "minor")
BLOCKING = ("critical", "serious")  # what the project's pages must never have


@cache
def axe_source() -> str:
    return files("axe_playwright_python").joinpath("axe.min.js").read_text(encoding="utf-8")


def axe_version() -> str:
    """The axe-core version the wheel ships, from the file's own banner (``/*! axe v4.12.1``)."""
    found = re.search(r"axe v(\d+\.\d+\.\d+)", axe_source()[:200])
    return found.group(1) if found else "unknown"


def _serve(route: Route) -> None:
    route.fulfill(status=200, content_type="text/javascript", body=axe_source())


def inject(page: Page) -> None:
    """Load axe-core into the page unless it is there (a navigation drops it)."""
    if page.evaluate("() => typeof window.axe === 'object'"):
        return
    page.route(f"**{AXE_PATH}", _serve)
    try:
        page.add_script_tag(url=AXE_PATH)
    finally:
        page.unroute(f"**{AXE_PATH}", _serve)


def violations(page: Page, exclude: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """axe-core's violations of the page as it is now, with every rule axe runs by default (WCAG 2.x
    A and AA and its best practices): each ``{id, impact, help, nodes: [{target, html, summary}]}``.
    ``exclude``: CSS selectors of parts not checked."""
    inject(page)
    found: list[dict[str, Any]] = page.evaluate(
        """async (exclude) => {
          const context = exclude.length
            ? { include: [["html"]], exclude: exclude.map((selector) => [selector]) } : document;
          const results = await axe.run(context, { resultTypes: ["violations"] });
          return results.violations.map((v) => ({
            id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.map((n) => ({ target: n.target.join(" "), html: n.html.slice(0, 160),
                                         summary: n.failureSummary })),
          }));
        }""",
        list(exclude),
    )
    return found


def counts(found: list[dict[str, Any]]) -> dict[str, int]:
    """Violated rules per impact (every impact present, 0 when none)."""
    by_impact = Counter(v["impact"] for v in found)
    return {impact: by_impact.get(impact, 0) for impact in IMPACTS}


def blocking(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [v for v in found if v["impact"] in BLOCKING]


def describe(found: list[dict[str, Any]]) -> str:
    """A readable account of violations: rule, impact, help, and the first elements it flags."""
    lines = []
    for v in found:
        lines.append(f"{v['id']} ({v['impact']}, {len(v['nodes'])} elements): {v['help']}")
        lines.extend(f"    {n['target']}: {n['html']}" for n in v["nodes"][:4])
    return "\n".join(lines)
