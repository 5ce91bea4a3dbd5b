#!/usr/bin/env python3
"""An upstream for bench/gateway.py's large transfers, standard library only: HTTP/1.1 with
keep-alive, a thread per connection.

  POST/PUT any path   reads the body (Content-Length or chunked) and discards it; answers
                      the byte count
  GET /bytes/N        answers N bytes (Content-Length), written from one 1 MiB buffer

    bulk_upstream.py PORT
"""
import socket
import socketserver
import sys

PIECE = bytes(range(256)) * 4096  # 1 MiB


class Handler(socketserver.StreamRequestHandler):
    rbufsize = 1 << 20

    def handle(self):
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sink = bytearray(1 << 20)
        while True:
            line = self.rfile.readline()
            if not line:
                return
            method, target = line.split()[:2]
            headers = {}
            while True:
                h = self.rfile.readline()
                if h in (b"\r\n", b"\n", b""):
                    break
                name, _, value = h.partition(b":")
                headers[name.strip().lower()] = value.strip()
            if method in (b"POST", b"PUT"):
                got = self.read_body(headers, sink)
                self.answer(str(got).encode())
            elif target.startswith(b"/bytes/"):
                n = int(target[len(b"/bytes/"):])
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % n)
                view = memoryview(PIECE)
                while n > 0:
                    k = min(n, len(PIECE))
                    self.wfile.write(view[:k])
                    n -= k
                self.wfile.flush()
            else:
                self.answer(b"bulk upstream\n")

    def read_exact(self, n, sink):
        view = memoryview(sink)
        got = 0
        while got < n:
            k = self.rfile.readinto(view[:min(n - got, len(sink))])
            if not k:
                break
            got += k
        return got

    def read_body(self, headers, sink):
        if b"chunked" in headers.get(b"transfer-encoding", b"").lower():
            total = 0
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return total
                total += self.read_exact(size, sink)
                self.rfile.readline()
        return self.read_exact(int(headers.get(b"content-length", b"0")), sink)

    def answer(self, body):
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        self.wfile.flush()


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


if __name__ == "__main__":
    with Server(("127.0.0.1", int(sys.argv[1])), Handler) as server:
        server.serve_forever()
