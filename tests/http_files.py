"""A local HTTP server for the download tests: serves given bytes, honours Range requests unless
told not to, and can hang up after a number of bytes of one file (no network needed)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Server:
    """A ThreadingHTTPServer on 127.0.0.1 serving ``files`` (URL path -> bytes)."""

    def __init__(self, files: dict[str, bytes], honour_range: bool = True,
                 cut: int | None = None, cut_path: str | None = None) -> None:
        self.files = files
        self.honour_range = honour_range
        self.cut = cut  # send only this many bytes of cut_path, then hang up
        self.cut_path = cut_path
        self.requests: list[tuple[str, str | None]] = []  # (path, Range header)
        self.sent = 0  # body bytes sent
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                asked = self.headers.get("Range")
                server.requests.append((self.path, asked))
                body = server.files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                start = 0
                if asked and server.honour_range:
                    start = int(asked.removeprefix("bytes=").split("-")[0])
                    if start >= len(body):
                        self.send_error(416)
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(body) - start))
                self.end_headers()
                end = server.cut if server.cut and self.path == server.cut_path else len(body)
                with server.lock:  # counted before the client can see the bytes and move on
                    server.sent += end - start
                self.wfile.write(body[start:end])
                self.close_connection = end < len(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
