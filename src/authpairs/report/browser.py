"""Check a report page in headless Chromium over the DevTools protocol, and screenshot it.

The page is opened from disk in a fresh profile with networking features off. The check fails
on any console error or uncaught exception, any resource that failed to load, any image that is
not rendered (``naturalWidth == 0``) and any section without content. Needs the Debian
``chromium`` package and ``websocket-client`` (the ``dev`` extra).
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--hide-scrollbars", "--mute-audio",
                  "--remote-debugging-port=0", "--window-size=1280,900")

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
class PageCheck:
    """What the browser saw."""

    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    missing_images: list[str] = field(default_factory=list)
    empty_sections: list[str] = field(default_factory=list)
    sections: int = 0
    images: int = 0
    screenshot: Path | None = None

    @property
    def ok(self) -> bool:
        """True when nothing failed and the page has at least one section."""
        return self.sections > 0 and not (self.console_errors or self.failed_requests
                                           or self.missing_images or self.empty_sections)

    def problems(self) -> list[str]:
        """Every failure as one line."""
        out = [f"console error: {m}" for m in self.console_errors]
        out += [f"failed to load: {m}" for m in self.failed_requests]
        out += [f"image not rendered: {m}" for m in self.missing_images]
        out += [f"empty section: {m}" for m in self.empty_sections]
        if self.sections == 0:
            out.append("the page has no section")
        return out


def find_chromium() -> str | None:
    """The Chromium executable (``$CHROMIUM``, /usr/bin/chromium, or on PATH)."""
    for candidate in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


class _Session:
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

    def wait_for(self, method: str) -> None:
        """Wait until an event named ``method`` arrived."""
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._receive())

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


def check_page(html: Path, screenshot: Path | None = None, *, timeout: float = 60.0,
               scale: float = 0.5) -> PageCheck:
    """Open ``html`` in headless Chromium, inspect it and (optionally) save a full-page PNG.

    Raises :class:`BrowserError` when Chromium is missing or cannot be driven.
    """
    chromium = find_chromium()
    if chromium is None:
        raise BrowserError("Chromium not found: install the Debian 'chromium' package "
                           "(apt-get install -y chromium) or set CHROMIUM")
    check = PageCheck()
    with tempfile.TemporaryDirectory(prefix="authpairs-chromium-") as tmp:
        profile = Path(tmp)
        process = subprocess.Popen([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                                    "about:blank"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        try:
            session = _Session(_devtools_url(profile, process, timeout), timeout)
            try:
                for domain in ("Runtime", "Log", "Page", "Network"):
                    session.call(f"{domain}.enable")
                session.call("Page.navigate", url=html.resolve().as_uri())
                session.wait_for("Page.loadEventFired")
                seen = json.loads(session.call("Runtime.evaluate", expression=_INSPECT,
                                               returnByValue=True)["result"]["value"])
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
                _collect(check, session.events)
                session.call("Browser.close")
            finally:
                session.close()
        finally:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    return check
