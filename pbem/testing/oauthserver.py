"""A small OAuth2 authorization server on 127.0.0.1 for the tests (and scripts/devmail.py).

``TokenServer`` speaks the few endpoints pbem and Dovecot use, with the
standard library's HTTP server in a thread:

- ``POST /device``: RFC 8628 device authorization (a device code, a user code,
  the verification URL, the polling interval);
- ``POST /token``: the device code grant (``authorization_pending`` until the
  test calls ``approve``, or at the second poll with ``auto_approve``;
  ``slow_down`` once when ``slow_down_once``; ``access_denied`` after
  ``deny``; ``expired_token`` after ``expire_device``)
  and the refresh token grant (``invalid_grant`` once the test ``revoke``s);
- ``POST /introspect``: RFC 7662 introspection as Dovecot's oauth2 passdb asks
  it (``introspection_mode = post``): ``{"active": true, "username": ...}``
  for a live access token, ``{"active": false}`` for any other.

Access tokens live until the test calls ``expire_access_tokens``; the
counters (``refreshes``, ``refused_introspections``) let a test see what
happened on the wire. Nothing here is product code.
"""

from __future__ import annotations

import json
import secrets
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

from pbem.testing.mailservers import HOST


@dataclass
class _Grant:
    """One device authorization: who logs in, and how far it has got."""

    user: str
    polls: int = 0
    state: str = "pending"  # pending, approved, denied, expired, used


@dataclass
class TokenServerState:
    access: dict[str, str] = field(default_factory=dict)  # access token -> user
    refresh: dict[str, str] = field(default_factory=dict)  # refresh token -> user
    devices: dict[str, _Grant] = field(default_factory=dict)  # device code -> grant
    refreshes: int = 0
    refused_introspections: int = 0
    introspections: int = 0
    device_polls: int = 0


class TokenServer:
    """The authorization server; ``user`` is whom the next device login is for."""

    def __init__(self, user: str = "", *, interval: int = 0, rotate_refresh: bool = True) -> None:
        self.user = user
        self.interval = interval
        self.rotate_refresh = rotate_refresh
        self.slow_down_once = False
        self.auto_approve = False  # a device login is approved at its second poll
        self.auto_deny = False  # ... or declined there
        self.expires_in = 3600
        self.state = TokenServerState()
        self.lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def token_endpoint(self) -> str:
        return f"{self.url}/token"

    @property
    def device_endpoint(self) -> str:
        return f"{self.url}/device"

    @property
    def introspection_url(self) -> str:
        return f"{self.url}/introspect"

    def start(self) -> None:
        server = ThreadingHTTPServer((HOST, 0), _handler_for(self))
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()
        self._server = server

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    # --- what a test does -----------------------------------------------------

    def issue(self, user: str) -> tuple[str, str]:
        """A fresh (access token, refresh token) pair for ``user``, as a login would give."""
        with self.lock:
            return self._issue(user)

    def _issue(self, user: str) -> tuple[str, str]:
        access, refresh = f"at-{secrets.token_hex(8)}", f"rt-{secrets.token_hex(8)}"
        self.state.access[access] = user
        self.state.refresh[refresh] = user
        return access, refresh

    def token_valid(self, user: str, token: str) -> bool:
        """Whether ``token`` is a live access token of ``user`` (for an SMTP relay)."""
        with self.lock:
            return self.state.access.get(token) == user

    def approve(self) -> None:
        self._set_devices("approved")

    def deny(self) -> None:
        self._set_devices("denied")

    def expire_device(self) -> None:
        self._set_devices("expired")

    def _set_devices(self, state: str) -> None:
        with self.lock:
            for grant in self.state.devices.values():
                if grant.state == "pending":
                    grant.state = state

    def expire_access_tokens(self) -> None:
        """Every access token handed out so far stops working (they expired)."""
        with self.lock:
            self.state.access.clear()

    def revoke(self) -> None:
        """Every refresh and access token stops working (the GM revoked pbem's access)."""
        with self.lock:
            self.state.access.clear()
            self.state.refresh.clear()

    # --- the endpoints ----------------------------------------------------------

    def answer(self, path: str, form: dict[str, str]) -> tuple[int, dict[str, object]]:
        with self.lock:
            if path == "/device":
                code = f"dc-{secrets.token_hex(8)}"
                self.state.devices[code] = _Grant(self.user)
                return 200, {
                    "device_code": code,
                    "user_code": "WDJB-MJHT",
                    "verification_uri": f"{self.url}/activate",
                    "expires_in": 900,
                    "interval": self.interval,
                }
            if path == "/introspect":
                self.state.introspections += 1
                user = self.state.access.get(form.get("token", ""))
                if user is None:
                    self.state.refused_introspections += 1
                    return 200, {"active": False}
                return 200, {"active": True, "username": user}
            if path == "/token":
                return self._token(form)
        return 404, {"error": "not_found"}

    def _token(self, form: dict[str, str]) -> tuple[int, dict[str, object]]:
        grant_type = form.get("grant_type", "")
        if grant_type == "refresh_token":
            user = self.state.refresh.get(form.get("refresh_token", ""))
            if user is None:
                return 400, {"error": "invalid_grant", "error_description": "token revoked"}
            self.state.refreshes += 1
            if self.rotate_refresh:
                del self.state.refresh[form["refresh_token"]]
                access, refresh = self._issue(user)
            else:
                access, _ = self._issue(user)
                refresh = form["refresh_token"]
            return 200, self._tokens(access, refresh)
        if grant_type == "urn:ietf:params:oauth:grant-type:device_code":
            self.state.device_polls += 1
            grant = self.state.devices.get(form.get("device_code", ""))
            if grant is None:
                return 400, {"error": "invalid_grant"}
            if self.slow_down_once:
                self.slow_down_once = False
                return 400, {"error": "slow_down"}
            grant.polls += 1
            if grant.state == "pending" and grant.polls >= 2:
                if self.auto_approve:
                    grant.state = "approved"
                elif self.auto_deny:
                    grant.state = "denied"
            error = {
                "pending": "authorization_pending",
                "denied": "access_denied",
                "expired": "expired_token",
                "used": "invalid_grant",
            }.get(grant.state)
            if error is not None:
                return 400, {"error": error}
            grant.state = "used"
            return 200, self._tokens(*self._issue(grant.user))
        return 400, {"error": "unsupported_grant_type"}

    def _tokens(self, access: str, refresh: str) -> dict[str, object]:
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.expires_in,
            "refresh_token": refresh,
        }


def _handler_for(server: TokenServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode("utf-8", errors="replace")
            form = {key: values[0] for key, values in parse_qs(body).items()}
            status, answer = server.answer(self.path.split("?")[0], form)
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            return  # quiet: tokens must not reach a log, not even a test's

    return Handler
