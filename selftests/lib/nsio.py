# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""nsio.py - what the harnesses of selftests/lib share: for ct_diff.py
and nat_diff.py, the test bed's MACs and sides, the sentinel's bound and
packet sockets made in a network namespace of the caller's choice; for
ct_conn.py and nat_peer.py, a connection driven line by line. Imported
by those scripts from their own directory (python3 puts a script's
directory first on sys.path).
"""

import ctypes
import os
import socket
import sys

CLONE_NEWNET = 0x40000000
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4

# testbed.bash's MACs: s0 (inside), d0 (router, inside), d1, k0 (outside)
MAC = {"in": "02:78:6e:00:00:01", "rin": "02:78:6e:00:00:02",
       "rout": "02:78:6e:00:00:03", "out": "02:78:6e:00:00:04"}
OTHER = {"in": "out", "out": "in"}

# Seconds a sentinel may take before the harness gives up: a guard against
# a hang (a lost sentinel is an error of the test bed, never a fate).
SENTINEL_WAIT = 20

libc = ctypes.CDLL(None, use_errno=True)


def in_netns(ns, fn):
    """fn() run in network namespace ns (a socket made there stays there)."""
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    fd = os.open(f"/run/netns/{ns}", os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"setns to {ns}: {os.strerror(e)}")
        try:
            return fn()
        finally:
            if libc.setns(own, CLONE_NEWNET) != 0:
                e = ctypes.get_errno()
                raise OSError(e, f"setns back: {os.strerror(e)}")
    finally:
        os.close(fd)
        os.close(own)


def packet_socket(ns, dev):
    def make():
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                          socket.htons(ETH_P_ALL))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        s.bind((dev, 0))
        s.setblocking(False)
        return s
    return in_netns(ns, make)


def echo_lines(s, recv):
    """Each line of standard input sent on the connection s and its echo
    awaited (recv(n): at most n bytes of it, b"" at its end), then printed
    (flushed): "ok LINE", or "lost LINE" if the echo did not come whole
    (s's timeout bounds the wait)."""
    for line in sys.stdin:
        line = line.rstrip("\n")
        want = (line + "\n").encode()
        got = b""
        try:
            s.sendall(want)
            while len(got) < len(want):
                b = recv(len(want) - len(got))
                if not b:
                    break
                got += b
        except OSError:
            pass
        print(f"{'ok' if got == want else 'lost'} {line}", flush=True)
