"""Servers on 127.0.0.1 that fail the way real providers do, for `pbem mail test`'s tests.

``ScriptedImapServer`` greets, announces the capabilities it is given and
answers every LOGIN with the reply it is given: Gmail's "Application-specific
password required", Microsoft's refusal of basic authentication.
``SilentServer`` accepts connections and never says a word (a firewall that
swallows packets, or a TLS port spoken to in plain text): the client's
timeout is what happens. Both stop in ``stop`` and leave no thread behind.
"""

from __future__ import annotations

import socket
import socketserver
import threading

from pbem.testing.mailservers import HOST


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class ScriptedImapServer:
    """An IMAP server that refuses every LOGIN with ``login_reply`` (after the tag)."""

    def __init__(
        self,
        login_reply: str,
        capabilities: str = "IMAP4rev1 AUTH=PLAIN AUTH=LOGIN AUTH=XOAUTH2",
    ) -> None:
        self.login_reply = login_reply
        self.capabilities = capabilities
        self._server: _Server | None = None
        self.port = 0

    def start(self) -> None:
        owner = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                greeting = f"* OK [CAPABILITY {owner.capabilities}] ready\r\n"
                self.wfile.write(greeting.encode())
                for line in self.rfile:
                    tag, _, rest = line.decode(errors="replace").strip().partition(" ")
                    command = rest.split(" ", 1)[0].upper()
                    if command == "CAPABILITY":
                        reply = f"* CAPABILITY {owner.capabilities}\r\n{tag} OK done\r\n"
                    elif command in ("LOGIN", "AUTHENTICATE"):
                        reply = f"{tag} {owner.login_reply}\r\n"
                    elif command == "LOGOUT":
                        self.wfile.write(f"* BYE\r\n{tag} OK bye\r\n".encode())
                        return
                    else:
                        reply = f"{tag} BAD not in this script\r\n"
                    self.wfile.write(reply.encode())

        self._server = _Server((HOST, 0), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()


class SilentServer:
    """A port that accepts connections (the kernel's backlog) and never answers."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind((HOST, 0))
        self._socket.listen(16)
        self.port: int = self._socket.getsockname()[1]

    def stop(self) -> None:
        self._socket.close()
