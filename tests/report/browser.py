"""Check a report page in headless Chromium over the DevTools protocol, and screenshot it.

The page is opened from disk in a fresh profile with networking features off. The check fails
on any console error or uncaught exception, any resource that failed to load, any image that is
not rendered (``naturalWidth == 0``) and any section without content.

Readability is measured on the rendered page at each of :data:`VIEWPORTS` (a desktop and a
phone width): every figure must be shown at its natural size or larger (it scrolls instead of
shrinking), the page itself must not be wider than the viewport, the navigation links must lie
inside it without overlapping, and no text of the page may be smaller than ``min_text_px``.
Every SVG figure is then opened on its own, where each ``<text>`` element's rendered font size
(its font size times the element's screen transform) and its box are measured: the smallest
text times the figure's displayed scale must reach ``min_text_px`` at every width, and no text
may reach outside the figure (a clipped label). Needs the Debian ``chromium`` package and
``websocket-client`` (the ``dev`` extra).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--hide-scrollbars", "--mute-audio",
                  "--remote-debugging-port=0", "--window-size=1400,900")

#: Page widths the check lays the page out at (CSS px): a desktop and a phone.
VIEWPORTS = (1400, 390)
#: The smallest text the page and its figures may show (CSS px).
MIN_TEXT_PX = 10.0
#: How far (CSS px) a text may reach past a figure's edge before it counts as clipped
#: (anti-aliasing and font metrics round by a fraction of a pixel).
CLIP_TOLERANCE_PX = 0.5

_LAYOUT = """JSON.stringify((() => {
  const vw = document.documentElement.clientWidth;
  const rect = e => { const r = e.getBoundingClientRect();
                      return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const small = [];
  for (const el of document.querySelectorAll('body *')) {
    const own = Array.from(el.childNodes).filter(n => n.nodeType === 3 && n.textContent.trim());
    if (!own.length || !el.getClientRects().length) continue;
    const px = parseFloat(getComputedStyle(el).fontSize);
    if (px < MIN_PX) small.push({text: own[0].textContent.trim().slice(0, 60), px: px});
  }
  return {
    viewport: vw, page_width: document.documentElement.scrollWidth,
    figures: Array.from(document.querySelectorAll('figure img')).map(i => ({
        src: i.getAttribute('src'), shown: i.getBoundingClientRect().width,
        natural: i.naturalWidth})),
    nav: Array.from(document.querySelectorAll('nav a')).map(a => ({
        text: a.innerText, ...rect(a)})),
    small: small};
})())"""

_SVG_TEXT = """JSON.stringify((() => {
  const box = document.documentElement.getBoundingClientRect();
  const texts = [];
  for (const t of document.querySelectorAll('text')) {
    const words = t.textContent.trim();
    if (!words) continue;
    const m = t.getScreenCTM();
    const r = t.getBoundingClientRect();
    texts.push({text: words.slice(0, 60),
                px: parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b),
                left: r.left - box.left, right: r.right - box.left,
                top: r.top - box.top, bottom: r.bottom - box.top});
  }
  return {width: box.width, height: box.height, texts: texts};
})())"""

_INSPECT = """JSON.stringify({
  images: Array.from(document.images).map(i => ({src: i.getAttribute('src'),
                                               ok: i.complete && i.naturalWidth > 0})),
  sections: Array.from(document.querySelectorAll('section')).map(s => ({
      id: s.id,
      content: s.querySelectorAll('table tbody tr, img, p').length,
      text: s.innerText.replace((s.querySelector('h2') || {innerText: ''}).innerText, '')
             .trim().length})),
  width: document.documentElement.scrollWidth,
  height: document.documentElement.scrollHeight})"""


class BrowserError(RuntimeError):
    """Chromium could not be started or driven."""


@dataclass
class FigureText:
    """The text of one SVG figure opened on its own (natural size, CSS px)."""

    src: str
    texts: int
    smallest_px: float
    smallest: str
    clipped: list[str] = field(default_factory=list)


@dataclass
class ViewportCheck:
    """The page laid out at one width: figure scales, text sizes, overflow, navigation."""

    width: int
    page_width: float = 0.0
    #: displayed width / natural width of each figure (by src)
    figure_scale: dict[str, float] = field(default_factory=dict)
    #: smallest rendered figure text (CSS px) of each SVG figure (by src)
    figure_text_px: dict[str, float] = field(default_factory=dict)
    small_text: list[str] = field(default_factory=list)
    navigation: list[str] = field(default_factory=list)

    def problems(self, min_text_px: float) -> list[str]:
        """Every readability failure at this width as one line."""
        at = f"at {self.width} px"
        out = []
        if self.page_width > self.width + 1:
            out.append(f"{at}: the page is {self.page_width:.0f} px wide (scrolls sideways)")
        out += [f"{at}: figure {src} shrunk to {scale:.0%} of its size"
                for src, scale in self.figure_scale.items() if scale < 0.995]
        out += [f"{at}: figure {src} text {px:.1f} px < {min_text_px:g} px"
                for src, px in self.figure_text_px.items() if px < min_text_px]
        out += [f"{at}: page text {m}" for m in self.small_text]
        out += [f"{at}: navigation {m}" for m in self.navigation]
        return out


@dataclass
class PageCheck:
    """What the browser saw."""

    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    missing_images: list[str] = field(default_factory=list)
    empty_sections: list[str] = field(default_factory=list)
    sections: int = 0
    images: int = 0
    screenshot: Path | None = None
    min_text_px: float = MIN_TEXT_PX
    figures: list[FigureText] = field(default_factory=list)
    viewports: list[ViewportCheck] = field(default_factory=list)

    @property
    def readability_problems(self) -> list[str]:
        """Clipped figure text and every viewport's readability failures."""
        out = [f"figure {f.src}: clipped text {c}" for f in self.figures for c in f.clipped]
        out += [f"figure {f.src}: no text element to measure (text drawn as paths?)"
                for f in self.figures if not f.texts]
        for viewport in self.viewports:
            out += viewport.problems(self.min_text_px)
        return out

    @property
    def ok(self) -> bool:
        """True when nothing failed and the page has at least one section."""
        return self.sections > 0 and not (self.console_errors or self.failed_requests
                                           or self.missing_images or self.empty_sections
                                           or self.readability_problems)

    def problems(self) -> list[str]:
        """Every failure as one line."""
        out = [f"console error: {m}" for m in self.console_errors]
        out += [f"failed to load: {m}" for m in self.failed_requests]
        out += [f"image not rendered: {m}" for m in self.missing_images]
        out += [f"empty section: {m}" for m in self.empty_sections]
        if self.sections == 0:
            out.append("the page has no section")
        return out + self.readability_problems


def find_chromium() -> str | None:
    """The Chromium executable (``$CHROMIUM``, /usr/bin/chromium, or on PATH)."""
    for candidate in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


class DevToolsSession:
    """A minimal synchronous DevTools client: commands by id, events collected on the way."""

    def __init__(self, url: str, timeout: float) -> None:
        import websocket  # websocket-client (dev extra)

        self.ws = websocket.create_connection(url, timeout=timeout, suppress_origin=True)
        self.deadline = time.monotonic() + timeout
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def _receive(self) -> dict[str, Any]:
        if time.monotonic() > self.deadline:
            raise BrowserError("Chromium did not answer in time")
        message: dict[str, Any] = json.loads(self.ws.recv())
        return message

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its result (events received meanwhile are kept)."""
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = self._receive()
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self.events.append(message)

    def wait_for(self, method: str, since: int = 0) -> None:
        """Wait until an event named ``method`` arrived (among events from index ``since``)."""
        while not any(e.get("method") == method for e in self.events[since:]):
            self.events.append(self._receive())

    def evaluate(self, expression: str) -> Any:
        """The JSON value a page expression returns (the expression returns a JSON string)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"page script failed: {result['exceptionDetails']}")
        return json.loads(result["result"]["value"])

    def open(self, url: str) -> None:
        """Navigate to ``url`` and wait for its load event."""
        since = len(self.events)
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired", since)

    def set_width(self, width: int) -> None:
        """Lay the page out at ``width`` CSS px (a phone below 600 px: mobile viewport)."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=900,
                  deviceScaleFactor=1, mobile=width < 600)

    def close(self) -> None:
        """Close the socket."""
        self.ws.close()


def _devtools_url(profile: Path, process: subprocess.Popen[bytes], timeout: float) -> str:
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + timeout
    while not port_file.is_file() or not port_file.read_text().strip():
        if process.poll() is not None:
            raise BrowserError(f"Chromium exited with code {process.returncode} at start")
        if time.monotonic() > deadline:
            raise BrowserError("Chromium did not open its DevTools port")
        time.sleep(0.05)
    port = port_file.read_text().split()[0]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=timeout) as resp:
        targets = json.loads(resp.read())
    pages = [t for t in targets if t.get("type") == "page"]
    if not pages:
        raise BrowserError("Chromium has no page target")
    return str(pages[0]["webSocketDebuggerUrl"])


def _collect(check: PageCheck, events: list[dict[str, Any]]) -> None:
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            text = " ".join(str(a.get("value", a.get("description", "")))
                            for a in params.get("args", []))
            check.console_errors.append(text)
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            check.console_errors.append(str(details.get("exception", {}).get(
                "description", details.get("text", "exception"))))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            check.console_errors.append(f"{entry.get('text', '')} {entry.get('url', '')}".strip())
        elif method == "Network.loadingFailed":
            check.failed_requests.append(str(params.get("errorText", "")))


def _navigation_problems(links: list[dict[str, Any]], viewport: float) -> list[str]:
    """Links reaching outside the viewport, or overlapping one another."""
    out = [f"link '{a['text']}' reaches outside the viewport ({a['left']:.0f} to "
           f"{a['right']:.0f} px)" for a in links
           if a["left"] < -0.5 or a["right"] > viewport + 0.5]
    for i, a in enumerate(links):
        for b in links[i + 1:]:
            if (a["left"] < b["right"] - 0.5 and b["left"] < a["right"] - 0.5
                    and a["top"] < b["bottom"] - 0.5 and b["top"] < a["bottom"] - 0.5):
                out.append(f"links '{a['text']}' and '{b['text']}' overlap")
    return out


def _figure_text(src: str, seen: dict[str, Any]) -> FigureText:
    """The smallest text of an SVG figure and every text that reaches past its edges."""
    texts = seen["texts"]
    smallest = min(texts, key=lambda t: t["px"], default=None)
    clipped = []
    for t in texts:
        outside = max(-t["left"], -t["top"], t["right"] - seen["width"],
                      t["bottom"] - seen["height"])
        if outside > CLIP_TOLERANCE_PX:
            clipped.append(f"'{t['text']}' ({outside:.1f} px outside)")
    return FigureText(src, len(texts), smallest["px"] if smallest else float("inf"),
                      smallest["text"] if smallest else "", clipped)


def _inspect_layout(session: DevToolsSession, check: PageCheck, width: int) -> ViewportCheck:
    session.set_width(width)
    seen = session.evaluate(_LAYOUT.replace("MIN_PX", repr(check.min_text_px)))
    view = ViewportCheck(width, float(seen["page_width"]))
    for f in seen["figures"]:
        if f["natural"]:
            view.figure_scale[f["src"]] = f["shown"] / f["natural"]
    view.small_text = [f"'{t['text']}' is {t['px']:.1f} px" for t in seen["small"]]
    view.navigation = _navigation_problems(seen["nav"], float(seen["viewport"]))
    return view


@contextmanager
def chromium_session(timeout: float = 60.0) -> Iterator[DevToolsSession]:
    """Headless Chromium in a fresh profile with networking features off, driven over the
    DevTools protocol (Runtime, Log, Page and Network events collected); closed on exit.

    Raises :class:`BrowserError` when Chromium is missing or cannot be driven.
    """
    chromium = find_chromium()
    if chromium is None:
        raise BrowserError("Chromium not found: install the Debian 'chromium' package "
                           "(apt-get install -y chromium) or set CHROMIUM")
    with tempfile.TemporaryDirectory(prefix="authpairs-chromium-") as tmp:
        profile = Path(tmp)
        process = subprocess.Popen([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                                    "about:blank"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        try:
            session = DevToolsSession(_devtools_url(profile, process, timeout), timeout)
            try:
                for domain in ("Runtime", "Log", "Page", "Network"):
                    session.call(f"{domain}.enable")
                yield session
                session.call("Browser.close")
            finally:
                session.close()
        finally:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def check_page(html: Path, screenshot: Path | None = None, *, timeout: float = 60.0,
               scale: float = 0.5, viewports: tuple[int, ...] = VIEWPORTS,
               min_text_px: float = MIN_TEXT_PX) -> PageCheck:
    """Open ``html`` in headless Chromium, inspect it at each width of ``viewports``, measure
    the text of every SVG figure, and (optionally) save a full-page PNG at the first width.

    Raises :class:`BrowserError` when Chromium is missing or cannot be driven.
    """
    check = PageCheck(min_text_px=min_text_px)
    with chromium_session(timeout) as session:
        if viewports:
            session.set_width(viewports[0])
        session.open(html.resolve().as_uri())
        seen = session.evaluate(_INSPECT)
        check.images = len(seen["images"])
        check.missing_images = [i["src"] for i in seen["images"] if not i["ok"]]
        check.sections = len(seen["sections"])
        check.empty_sections = [s["id"] for s in seen["sections"]
                                if s["content"] == 0 or s["text"] == 0]
        if screenshot is not None:
            shot = session.call("Page.captureScreenshot", format="png",
                                captureBeyondViewport=True,
                                clip={"x": 0, "y": 0, "width": seen["width"],
                                      "height": seen["height"], "scale": scale})
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            screenshot.write_bytes(base64.b64decode(shot["data"]))
            check.screenshot = screenshot
        check.viewports = [_inspect_layout(session, check, w) for w in viewports]
        _collect(check, session.events)  # the page's own events, before the figures
        svgs = [i["src"] for i in seen["images"]
                if i["ok"] and str(i["src"]).endswith(".svg")]
        for src in dict.fromkeys(svgs):
            session.open((html.resolve().parent / src).as_uri())
            check.figures.append(_figure_text(src, session.evaluate(_SVG_TEXT)))
        for view in check.viewports:
            for figure in check.figures:
                if figure.src in view.figure_scale and figure.texts:
                    view.figure_text_px[figure.src] = (
                        figure.smallest_px * view.figure_scale[figure.src])
    return check


def page_problems(session: DevToolsSession) -> list[str]:
    """Console errors, uncaught exceptions and failed loads among the events seen so far."""
    check = PageCheck()
    _collect(check, session.events)
    return [*check.console_errors, *(f"failed to load: {m}" for m in check.failed_requests)]


_CASE_STATE = """JSON.stringify((() => {
  const s = window.authpairsCaseBrowser || null;
  const nav = performance.getEntriesByType('navigation')[0];
  const count = document.querySelector('#case-browser .cb-count');
  return {stats: s, load_ms: nav ? nav.loadEventEnd : null,
          count: count ? Number(count.dataset.count) : null,
          rows: document.querySelectorAll('#case-browser .cb-list tbody tr').length,
          title: (document.getElementById('cb-detail-title') || {}).textContent || null};
})())"""

_CASE_FILTER = """JSON.stringify((() => {
  const t0 = performance.now();
  const choices = CHOICES;
  for (const [key, value] of choices) {
    const el = document.getElementById('cb-filter-' + key);
    const option = Array.from(el.options).find(o => o.value === value
                                                 || o.textContent.split(' (')[0] === value);
    if (!option) { throw new Error('no option ' + value + ' for filter ' + key); }
    el.value = option.value;
    el.dispatchEvent(new Event('change'));
  }
  document.body.offsetHeight;  /* lay the new rows out before the clock stops */
  const count = Number(document.querySelector('#case-browser .cb-count').dataset.count);
  return {ms: performance.now() - t0, count: count,
          rows: document.querySelectorAll('#case-browser .cb-list tbody tr').length};
})())"""

_CASE_OPEN = """JSON.stringify((() => {
  const buttons = document.querySelectorAll('#case-browser button.cb-open');
  buttons[INDEX].click();
  const pick = sel => {
    const el = document.querySelector(sel);
    return el ? el.textContent : null;
  };
  return {title: pick('#cb-detail-title'), prompt: pick('#cb-prompt-last'),
          answer: pick('#cb-answer'), record: Number(buttons[INDEX].dataset.record),
          detail: document.querySelector('#case-browser .cb-detail').innerText};
})())"""


@dataclass
class CaseBrowserState:
    """What the case browser shows: its counts and load timing (ms since navigation start)."""

    records: int
    count: int
    rows: int
    parse_ms: float
    first_list_ms: float
    load_ms: float
    title: str | None


def case_browser_state(session: DevToolsSession) -> CaseBrowserState:
    """The case browser of the open page: records, matching count, rows shown, timing."""
    seen = session.evaluate(_CASE_STATE)
    stats = seen["stats"]
    if stats is None:
        raise BrowserError("the page has no case browser (or its script did not run)")
    return CaseBrowserState(int(stats["records"]), int(seen["count"]), int(seen["rows"]),
                            float(stats["parseMs"]), float(stats["firstListMs"]),
                            float(seen["load_ms"] or 0.0), seen["title"])


def case_browser_filter(session: DevToolsSession, choices: list[tuple[str, str]]
                        ) -> dict[str, Any]:
    """Set filters in order (``(filter key, option value or shown name)``; ``""`` = all) and
    return the time it took (``ms``, new rows laid out), the matching count and rows shown."""
    result: dict[str, Any] = session.evaluate(
        _CASE_FILTER.replace("CHOICES", json.dumps([list(c) for c in choices])))
    return result


def case_browser_open(session: DevToolsSession, index: int) -> dict[str, Any]:
    """Click the ``index``-th case shown in the list and return what the detail pane shows
    (its title, the last prompt message, the raw answer, the record index, all its text)."""
    result: dict[str, Any] = session.evaluate(_CASE_OPEN.replace("INDEX", str(int(index))))
    return result
