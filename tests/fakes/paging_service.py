"""A paging service on loopback, a real HTTP server in a thread: what the API destination's
requests would reach. It keeps every request (path, headers, JSON body) and, as PagerDuty's
Events v2 does, one alert per ``dedup_key``: a trigger opens it once (a second trigger with the
same key adds to it, no second page), a resolve closes it. ``answer`` sets the status it replies
with (a test of a refusing service)."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# The largest request the service reads (PagerDuty takes at most 512 KB).
MAX_REQUEST_BYTES = 512 * 1024


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class PagingService:
    url: str = ""
    answer: int = 202
    requests: list[Request] = field(default_factory=list)
    # dedup_key -> "triggered" or "resolved"; pages: the keys of the alerts opened, in order.
    alerts: dict[str, str] = field(default_factory=dict)
    pages: list[str] = field(default_factory=list)

    def take(self, request: Request) -> None:
        self.requests.append(request)
        key, action = request.body.get("dedup_key"), request.body.get("event_action")
        if self.answer >= 300 or not isinstance(key, str):
            return
        if action == "trigger" and self.alerts.get(key) != "triggered":
            self.alerts[key] = "triggered"
            self.pages.append(key)
        elif action == "resolve" and key in self.alerts:
            self.alerts[key] = "resolved"


@contextlib.contextmanager
def paging_service() -> Iterator[PagingService]:
    service = PagingService()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = min(int(self.headers.get("Content-Length", "0")), MAX_REQUEST_BYTES)
            body = json.loads(self.rfile.read(length) or b"{}")
            service.take(Request(self.path, dict(self.headers.items()), body))
            self.send_response(service.answer)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(json.dumps({"status": "success" if service.answer < 300 else "error"}).encode())

        def log_message(self, format: str, *args: Any) -> None:
            pass  # no request lines in the test output

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    service.url = f"http://127.0.0.1:{server.server_address[1]}/v2/enqueue"
    try:
        yield service
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
