"""``python -m services.bench.pages --url URL``: what the web client costs a browser to load.

Measured in Debian's Chromium (Playwright, ``/usr/bin/chromium``) against a running server, for the
lobby, a table being played (seen by a spectator) and the replay of a finished game:

- **requests** and **page weight** (decoded bytes) of a first visit with a cold cache, and the
  **transferred** bytes (what crossed the network: headers and, where the server compressed them,
  compressed bodies), from Chromium's own network events (DevTools protocol);
- the **time to the page being usable** (the lobby's create form, the table's board, the replay's
  first step) with a cold cache, and after a **warm reload** (the same tab reloaded), with the
  requests and bytes the reload sent;
- per network profile: ``loopback`` (no throttling) and an emulated link (``--rtt-ms``, default
  50 ms round trip, ``--mbps`` 20 Mbit/s down and up), where each round trip of a module waterfall
  shows.

Times are medians over ``--runs`` runs, taken in the page (``performance.now()`` when the ready
element appears, from the navigation's start). The tables it needs are made through the HTTP API:
a practice Skull table with one seat taken by this script and two bots (it stays in play, awaiting
that seat), and a bot-only practice table played to its end for the replay. It runs against any
version of the server (it only uses the HTTP API and the pages), so the same script measures the
code before and after a change in the same session.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

CHROMIUM = Path("/usr/bin/chromium")
SEED = "5eed" * 16  # a practice table: no turn timer, the same deal every run
SETTLE_SECONDS = 0.5  # no new request for this long after the page is ready: its load is complete
DEADLINE_SECONDS = 30.0
READY = {  # the element whose appearance makes each page usable
    "lobby": "[data-testid=create-form]",
    "table": "[data-testid=table][data-status] .board",
    "replay": "[data-testid=position]:not(:empty)",
}
INIT_SCRIPT = """
(() => {
  const selector = %r;
  const mark = () => {
    if (window.__readyAt === undefined && document.querySelector(selector)) {
      window.__readyAt = performance.now();
      observer.disconnect();
    }
  };
  const observer = new MutationObserver(mark);
  observer.observe(document, { childList: true, subtree: true, attributes: true });
})();
"""


@dataclass
class Request:
    url: str
    kind: str = ""
    status: int = 0
    cached: bool = False  # served from the memory or disk cache: no network
    encoding: str = ""
    transferred: int = 0  # bytes received over the network (headers included)
    decoded: int = 0  # body bytes after decoding
    done: bool = False
    started: float = 0.0  # DevTools' monotonic timestamps (seconds)
    finished: float = 0.0


@dataclass
class Load:
    ready_ms: float
    requests: list[Request] = field(default_factory=list)

    @property
    def network(self) -> list[Request]:
        return [r for r in self.requests if not r.cached]

    @property
    def weight(self) -> int:
        return sum(r.decoded for r in self.requests)

    @property
    def transferred(self) -> int:
        return sum(r.transferred for r in self.requests)


class Recorder:
    """Chromium's network events of one page (DevTools protocol), by request id."""

    def __init__(self, cdp: Any) -> None:
        self.requests: dict[str, Request] = {}
        self.last_event = time.monotonic()
        cdp.on("Network.requestWillBeSent", self._sent)
        cdp.on("Network.responseReceived", self._response)
        cdp.on("Network.requestServedFromCache", self._from_cache)
        cdp.on("Network.dataReceived", self._data)
        cdp.on("Network.loadingFinished", self._finished)
        cdp.on("Network.loadingFailed", self._failed)

    def reset(self) -> None:
        self.requests.clear()

    def _touch(self) -> None:
        self.last_event = time.monotonic()

    def _sent(self, event: dict[str, Any]) -> None:
        url = event["request"]["url"]
        if not url.startswith("data:"):
            self.requests[event["requestId"]] = Request(
                url, event.get("type", ""), started=event["timestamp"]
            )
        self._touch()

    def _response(self, event: dict[str, Any]) -> None:
        request = self.requests.get(event["requestId"])
        if request is None:
            return
        response = event["response"]
        request.status = response["status"]
        request.kind = event.get("type", request.kind)
        headers = {k.lower(): v for k, v in response.get("headers", {}).items()}
        request.encoding = headers.get("content-encoding", "")
        request.cached = request.cached or response.get("fromDiskCache", False)
        self._touch()

    def _from_cache(self, event: dict[str, Any]) -> None:
        request = self.requests.get(event["requestId"])
        if request is not None:
            request.cached = True

    def _data(self, event: dict[str, Any]) -> None:
        request = self.requests.get(event["requestId"])
        if request is not None:
            request.decoded += event["dataLength"]
            if request.kind == "EventSource":  # never finishes: count its bytes as they come
                request.transferred += event["encodedDataLength"]
        self._touch()

    def _finished(self, event: dict[str, Any]) -> None:
        request = self.requests.get(event["requestId"])
        if request is not None:
            request.done = True
            request.finished = event["timestamp"]
            request.transferred = 0 if request.cached else int(event["encodedDataLength"])
        self._touch()

    def _failed(self, event: dict[str, Any]) -> None:
        request = self.requests.get(event["requestId"])
        if request is not None:
            request.done = True
        self._touch()

    def settled(self) -> bool:
        """No request of the page left loading (live streams aside), none new for a while."""
        busy = [r for r in self.requests.values() if not r.done and r.kind != "EventSource"]
        return not busy and time.monotonic() - self.last_event >= SETTLE_SECONDS


def wait(condition: Any, what: str, deadline: float = DEADLINE_SECONDS, page: Any = None) -> None:
    """Poll ``condition`` until it holds; with a ``page``, its events are delivered meanwhile (the
    sync API delivers them only while it waits on the browser, never during ``time.sleep``)."""
    until = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > until:
            raise TimeoutError(f"timed out waiting for {what}")
        if page is not None:
            page.wait_for_timeout(20)
        else:
            time.sleep(0.05)


@dataclass(frozen=True)
class Profile:
    name: str
    rtt_ms: float = 0.0
    mbps: float = 0.0

    def conditions(self) -> dict[str, Any]:
        rate = -1 if not self.mbps else self.mbps * 1_000_000 / 8
        return {
            "offline": False,
            "latency": self.rtt_ms,
            "downloadThroughput": rate,
            "uploadThroughput": rate,
        }


class Pages:
    """One browser; each cold load in a context of its own (an empty HTTP cache)."""

    def __init__(self, browser: Any, base: str) -> None:
        self.browser = browser
        self.base = base

    def load(self, path: str, page_kind: str, profile: Profile, reloads: int) -> tuple[Load, list[Load]]:
        """A cold first visit of ``path``, then ``reloads`` reloads of the same tab."""
        context = self.browser.new_context(base_url=self.base, viewport={"width": 1366, "height": 768})
        try:
            context.add_init_script(INIT_SCRIPT % READY[page_kind])
            page = context.new_page()
            cdp = context.new_cdp_session(page)
            cdp.send("Network.enable")
            if profile.rtt_ms or profile.mbps:
                cdp.send("Network.emulateNetworkConditions", profile.conditions())
            recorder = Recorder(cdp)
            first = self._visit(page, recorder, lambda: page.goto(path, wait_until="commit"))
            again = [
                self._visit(page, recorder, lambda: page.reload(wait_until="commit")) for _ in range(reloads)
            ]
            return first, again
        finally:
            context.close()

    def _visit(self, page: Any, recorder: Recorder, go: Any) -> Load:
        recorder.reset()
        go()
        wait(lambda: page.evaluate("window.__readyAt !== undefined"), "the page to be ready", page=page)
        ready = float(page.evaluate("window.__readyAt"))
        try:
            wait(recorder.settled, "the page's requests to settle", page=page)
        except TimeoutError:
            busy = [r.url for r in recorder.requests.values() if not r.done and r.kind != "EventSource"]
            raise TimeoutError(f"requests still loading: {busy}") from None
        return Load(ready, list(recorder.requests.values()))


def make_tables(base: str) -> tuple[str, str]:
    """A Skull table in play awaiting a seat this script holds (bots in the others), and a finished
    bot-only table, both practice tables (no timers)."""
    with httpx.Client(base_url=base, timeout=30) as client:
        options = {"seed": SEED}
        playing = client.post("/games", json={"game": "skull", "players": 3, "options": options})
        playing.raise_for_status()
        table = playing.json()["game_id"]
        client.post(f"/games/{table}/players", json={"name": "Bench"}).raise_for_status()
        bots = {"Authorization": f"Bearer {playing.json()['host_token']}"}
        client.post(f"/games/{table}/bots", json={}, headers=bots).raise_for_status()
        done = client.post("/games", json={"game": "skull", "players": 3, "options": options})
        done.raise_for_status()
        finished = done.json()["game_id"]
        host = {"Authorization": f"Bearer {done.json()['host_token']}"}
        client.post(f"/games/{finished}/bots", json={}, headers=host).raise_for_status()

        def over() -> bool:
            view = client.get(f"/games/{finished}/view").json()
            return bool(view.get("status") == "finished")

        wait(over, "the bots' game to finish", deadline=120)

        def started() -> bool:
            return bool(client.get(f"/games/{table}/view").json().get("status") == "playing")

        wait(started, "the table to start")
        return table, finished


def kib(n: float) -> str:
    return f"{n / 1024:.1f} KiB"


def report(name: str, profile: Profile, cold: list[Load], warm: list[Load]) -> list[str]:
    first = cold[0]
    ready = statistics.median(c.ready_ms for c in cold)
    lines = [
        f"{name:<7} {profile.name:<22} cold: {len(first.requests):>2} requests, "
        f"weight {kib(first.weight):>9}, transferred {kib(first.transferred):>9}, "
        f"ready {ready:7.1f} ms (median of {len(cold)})",
    ]
    if warm:
        network = statistics.median(len(w.network) for w in warm)
        sent = statistics.median(w.transferred for w in warm)
        lines.append(
            f"{'':<7} {'':<22} warm reload: {network:g} requests to the server, transferred {kib(sent):>9}, "
            f"ready {statistics.median(w.ready_ms for w in warm):7.1f} ms (median of {len(warm)})"
        )
    return lines


def detail(load: Load) -> list[str]:
    """Each request: status, encoding, bytes, and when it started and ended (ms after the first)."""
    zero = min((r.started for r in load.requests), default=0.0)

    def at(t: float) -> str:
        return f"{(t - zero) * 1000:6.0f}" if t else "     -"

    return [
        f"    {r.status or '-':>3} {'cache' if r.cached else r.encoding or 'identity':<8} "
        f"{r.transferred:>7} B {r.decoded:>7} B {at(r.started)}-{at(r.finished)} ms  {r.kind:<11} {r.url}"
        for r in load.requests
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="a running server, e.g. http://127.0.0.1:8000")
    parser.add_argument("--runs", type=int, default=5, help="cold loads (and warm reloads) per page")
    parser.add_argument("--rtt-ms", type=float, default=50.0, help="the emulated link's round trip")
    parser.add_argument("--mbps", type=float, default=20.0, help="the emulated link's bandwidth")
    parser.add_argument("--requests", action="store_true", help="also list each request of a cold load")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    base = args.url.rstrip("/")
    table, finished = make_tables(base)
    link = Profile(f"{args.rtt_ms:g} ms RTT, {args.mbps:g} Mbit/s", args.rtt_ms, args.mbps)
    profiles = [Profile("loopback"), link]
    pages = {"lobby": "/", "table": f"/tables/{table}", "replay": f"/replay/{finished}"}
    print(f"web client pages at {base} (Chromium {CHROMIUM}), {args.runs} runs each", flush=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            bench = Pages(browser, base)
            for profile in profiles:
                for name, path in pages.items():
                    cold: list[Load] = []
                    warm: list[Load] = []
                    for _ in range(args.runs):
                        first, reloads = bench.load(path, name, profile, reloads=1)
                        cold.append(first)
                        warm += reloads
                    for line in report(name, profile, cold, warm):
                        print(line, flush=True)
                    if args.requests:
                        print("\n".join(detail(cold[0])), flush=True)
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
