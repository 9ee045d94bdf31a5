#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""TCP connections that carry data in two phases, for scaleout.bats.

serve ADDR PORT COUNT OUT
    Accepts COUNT connections on ADDR:PORT and echoes every byte back;
    when a connection ends (the client's FIN), appends a JSON line
    {"sport": N, "bytes": N} to OUT: what it received from that client
    port.
client DST PORT COUNT BYTES1 BYTES2 STATUS GO
    Opens COUNT connections to DST:PORT. Phase 1: on each, sends BYTES1
    bytes and reads their echo back. Then writes the connections' source
    ports to STATUS ({"phase": 1, "sports": [...]}), waits for the file GO
    to exist, and runs phase 2 the same way with BYTES2 bytes, then closes
    each connection (FIN, until the server's). Prints one JSON document:
    per connection its source port and, per phase, bytes sent, bytes
    echoed back and whether the echo is exactly what was sent.

Every socket operation has a timeout (TIMEOUT seconds, default 30): a lost
connection fails the client instead of hanging; the caller also bounds
the process with timeout(1).
"""

import json
import os
import socket
import sys
import threading
import time

TIMEOUT = float(os.environ.get("TIMEOUT", "30"))


def pattern(conn, phase, size):
    """Bytes unique to the connection and the phase, so that an echo of
    another connection's or phase's data does not compare equal."""
    seed = bytes("%d:%d:" % (conn, phase), "ascii")
    body = (seed * (size // len(seed) + 1))[:size]
    return body


def exchange(sock, data):
    """Sends data while reading the echo; returns the bytes echoed."""
    got = bytearray()
    sent = 0
    # Sending all first could fill both directions' buffers with large
    # data: interleave writes and reads.
    while sent < len(data) or len(got) < len(data):
        if sent < len(data):
            sent += sock.send(data[sent:sent + 16384])
        while len(got) < sent:
            chunk = sock.recv(65536)
            if not chunk:
                return bytes(got)
            got += chunk
    return bytes(got)


def client(dst, port, count, n1, n2, status, go):
    family = socket.AF_INET6 if ":" in dst else socket.AF_INET
    socks = []
    for _ in range(count):
        s = socket.socket(family, socket.SOCK_STREAM)
        s.settimeout(TIMEOUT)
        s.connect((dst, port))
        socks.append(s)
    res = [{"sport": s.getsockname()[1]} for s in socks]
    for phase, size in ((1, n1), (2, n2)):
        if phase == 2:
            with open(status + ".tmp", "w") as f:
                json.dump({"phase": 1, "sports": [r["sport"] for r in res]}, f)
            os.rename(status + ".tmp", status)
            end = time.monotonic() + TIMEOUT * 4
            while not os.path.exists(go):
                if time.monotonic() > end:
                    sys.exit("client: gave up waiting for %s" % go)
                time.sleep(0.05)
        for i, s in enumerate(socks):
            data = pattern(i, phase, size)
            try:
                echo = exchange(s, data)
            except OSError as e:
                echo = b""
                res[i]["error%d" % phase] = str(e)
            res[i]["phase%d" % phase] = {"sent": size, "echoed": len(echo),
                                         "same": echo == data}
    for s in socks:
        try:
            s.shutdown(socket.SHUT_WR)
            while s.recv(65536):
                pass
        except OSError:
            pass
        s.close()
    json.dump({"connections": res}, sys.stdout)
    print()


def serve_one(conn, out, lock):
    conn.settimeout(TIMEOUT * 6)
    sport = conn.getpeername()[1]
    n = 0
    try:
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            n += len(chunk)
            conn.sendall(chunk)
    except OSError:
        pass
    conn.close()
    with lock, open(out, "a") as f:
        f.write(json.dumps({"sport": sport, "bytes": n}) + "\n")


def serve(addr, port, count, out):
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    ls = socket.socket(family, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(count)
    ls.settimeout(TIMEOUT * 4)
    lock = threading.Lock()
    threads = []
    for _ in range(count):
        conn, _ = ls.accept()
        t = threading.Thread(target=serve_one, args=(conn, out, lock))
        t.start()
        threads.append(t)
    ls.close()
    for t in threads:
        t.join()


def main():
    a = sys.argv[1:]
    if len(a) == 5 and a[0] == "serve":
        serve(a[1], int(a[2]), int(a[3]), a[4])
    elif len(a) == 8 and a[0] == "client":
        client(a[1], int(a[2]), int(a[3]), int(a[4]), int(a[5]), a[6], a[7])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
