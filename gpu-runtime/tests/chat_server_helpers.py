"""A tiny OpenAI-compatible `/chat/completions` server for tests: the edge a judge or an API actor talks to,
started on a loopback port (nothing of ours is faked). Each test says how it answers with a `reply` function."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


@dataclass(frozen=True)
class Request:
    path: str
    auth: str | None
    body: dict


# reply(request, index) -> (HTTP status, assistant content or a raw error body)
Reply = Callable[[Request, int], tuple[int, str]]


class ChatServer:
    """Serves POSTs with `reply`; every request is kept in `requests`. Use as a context manager or call close()."""

    def __init__(self, reply: Reply):
        self.requests: list[Request] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                request = Request(self.path, self.headers.get("Authorization"), body)
                server.requests.append(request)
                status, content = reply(request, len(server.requests))
                if status != 200:
                    self.send_response(status)
                    self.end_headers()
                    self.wfile.write(content.encode())
                    return
                data = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/v1"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def __enter__(self) -> ChatServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


def last_message(request: Request) -> str:
    return request.body["messages"][-1]["content"]
