#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""ct_conn.py - one TCP connection held open and driven line by line
(selftests/conntrack.bats).

    ct_conn.py server PORT          accept connections on PORT (IPv4 and
                                    IPv6), echo each one's bytes back
    ct_conn.py client HOST PORT     connect to HOST PORT; each line read
                                    from standard input is sent and its
                                    echo awaited, then printed (flushed):
                                    "ok LINE", or "lost LINE" if the echo
                                    did not come within WAIT seconds

The client prints "connected" once the connection is up, or "refused
ERROR" and exits 1. Every wait is bounded (WAIT, default 10 s; -w): a lost
line is reported, never waited for forever. Ends at EOF of its input.
"""

import socket
import sys
import threading

from nsio import echo_lines

WAIT = 10.0


def server(port):
    ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    ls.bind(("::", port))
    ls.listen(64)
    while True:
        c, _ = ls.accept()
        threading.Thread(target=echo, args=(c,), daemon=True).start()


def echo(c):
    with c:
        while True:
            b = c.recv(65536)
            if not b:
                return
            c.sendall(b)


def client(host, port):
    try:
        s = socket.create_connection((host, port), timeout=WAIT)
    except OSError as e:
        print(f"refused {e}", flush=True)
        return 1
    s.settimeout(WAIT)
    print("connected", flush=True)
    echo_lines(s, s.recv)
    s.close()
    return 0


def main():
    global WAIT
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "-w":
        WAIT = float(args[1])
        args = args[2:]
    if len(args) == 2 and args[0] == "server":
        server(int(args[1]))
        return 0
    if len(args) == 3 and args[0] == "client":
        return client(args[1], int(args[2]))
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
