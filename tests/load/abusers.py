#!/usr/bin/env python3
"""Misbehaving clients for the load-plus-abuse check: run them beside wrk against one server.

    abusers.py PORT SECONDS

Each kind runs in its own threads until SECONDS pass, reconnecting whenever the server
closes on it (which is what it should do). Prints how many connections each kind made.
"""
import random
import socket
import sys
import threading
import time

port = int(sys.argv[1])
until = time.monotonic() + float(sys.argv[2])
counts = {}
lock = threading.Lock()


def connect():
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    with lock:
        counts[threading.current_thread().name] = counts.get(threading.current_thread().name, 0) + 1
    return s


def run(kind, fn):
    while time.monotonic() < until:
        try:
            with connect() as s:
                fn(s)
        except OSError:
            time.sleep(0.01)


def slowloris(s):
    # Headers that never end, one byte at a time.
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
    while time.monotonic() < until:
        s.sendall(b"X")
        time.sleep(0.2)


def garbage(s):
    s.sendall(bytes(random.getrandbits(8) for _ in range(random.randint(1, 2048))))
    s.recv(4096)


def silent(s):
    s.settimeout(max(0.1, until - time.monotonic()))
    s.recv(1)


def oversized(s):
    s.sendall(b"PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n")
    s.recv(4096)


def header_flood(s):
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-A: b\r\n" * 2000 + b"\r\n")
    s.recv(4096)


kinds = [("slowloris", slowloris, 40), ("garbage", garbage, 8), ("silent", silent, 20),
         ("oversized", oversized, 4), ("header-flood", header_flood, 4)]
threads = []
for name, fn, n in kinds:
    for i in range(n):
        t = threading.Thread(target=run, args=(name, fn), name=name, daemon=True)
        t.start()
        threads.append(t)
for t in threads:
    t.join(timeout=max(0.0, until - time.monotonic()) + 6)
print("abusers: " + ", ".join(f"{k} {v} connections" for k, v in sorted(counts.items())))
