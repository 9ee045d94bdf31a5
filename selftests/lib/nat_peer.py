#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""nat_peer.py - the two ends of a connection through a NAT, each saying
what it sees of the other (selftests/nat.bats).

    nat_peer.py server tcp PORT NAME
        accepts TCP connections on PORT (IPv4 and IPv6); greets each with
        the line "hello NAME ADDR PORT" (ADDR PORT: the peer as this
        server sees it: after translation), then echoes its bytes back
    nat_peer.py server udp PORT NAME LOG
        answers each datagram on PORT with "NAME ADDR PORT DATA" and
        appends the line "ADDR PORT DATA" to LOG (flushed)
    nat_peer.py client tcp HOST PORT [[SADDR,]SPORT]
        connects to HOST PORT (from SPORT, of SADDR), prints "connected NAME ADDR
        PORT LPORT" (the server's greeting; LPORT: this end's port), or
        "refused ERROR" and exits 1; then each line of standard input is
        sent and its echo awaited, as ct_conn.py: "ok LINE" or "lost LINE"
    nat_peer.py client udp HOST PORT [SADDR,]SPORT COUNT TAG [nowait]
        sends COUNT datagrams "TAG-1".."TAG-COUNT" from SPORT to HOST
        PORT, one at a time; each answer is awaited and printed: "reply
        I NAME ADDR PORT", or "lost I" if none came within WAIT; with
        nowait, sends them all and prints "sent COUNT"

Every wait is bounded (WAIT seconds, default 10; -w): what is lost is
reported, never waited for forever. With NAT_PEER_NO_CHECK=1 in the
environment, the UDP datagrams an end sends carry no checksum (IPv4's 0,
SO_NO_CHECK).
"""

import os
import socket
import sys
import threading

from nsio import echo_lines

WAIT = 10.0
SO_NO_CHECK = 11  # <asm-generic/socket.h>, not in Python's socket module


def peer(addr):
    """An address as the peer sees it, IPv4 without its mapped form."""
    host = addr[0]
    if host.startswith("::ffff:") and "." in host:
        host = host[len("::ffff:"):]
    return f"{host} {addr[1]}"


def listener(kind, port):
    ls = socket.socket(socket.AF_INET6, kind)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    ls.bind(("::", port))
    return ls


def tcp_server(port, name):
    ls = listener(socket.SOCK_STREAM, port)
    ls.listen(64)
    while True:
        c, addr = ls.accept()
        threading.Thread(target=echo, args=(c, f"hello {name} {peer(addr)}\n"),
                         daemon=True).start()


def echo(c, greeting):
    with c:
        try:
            c.sendall(greeting.encode())
            while True:
                b = c.recv(65536)
                if not b:
                    return
                c.sendall(b)
        except OSError:
            return


def no_check(s):
    if os.environ.get("NAT_PEER_NO_CHECK") == "1":
        s.setsockopt(socket.SOL_SOCKET, SO_NO_CHECK, 1)


def udp_server(port, name, log):
    s = listener(socket.SOCK_DGRAM, port)
    no_check(s)
    with open(log, "a") as f:
        while True:
            data, addr = s.recvfrom(65536)
            text = data.decode(errors="replace").strip()
            f.write(f"{peer(addr)} {text}\n")
            f.flush()
            s.sendto(f"{name} {peer(addr)} {text}".encode(), addr)


def family(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def local(spec):
    """[SADDR,]SPORT as a local address to bind to."""
    addr, _, port = spec.rpartition(",")
    return (addr, int(port))


def tcp_client(host, port, sport):
    s = socket.socket(family(host), socket.SOCK_STREAM)
    s.settimeout(WAIT)
    try:
        if sport:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(local(sport))
        s.connect((host, port))
        f = s.makefile("rb")
        hello = f.readline().decode().split()
        if len(hello) != 4 or hello[0] != "hello":
            raise OSError(f"no greeting: {hello}")
    except OSError as e:
        print(f"refused {e}", flush=True)
        return 1
    print(f"connected {' '.join(hello[1:])} {s.getsockname()[1]}", flush=True)
    echo_lines(s, f.read1)
    s.close()
    return 0


def udp_client(host, port, sport, count, tag, nowait):
    s = socket.socket(family(host), socket.SOCK_DGRAM)
    no_check(s)
    s.bind(local(sport))
    s.settimeout(WAIT)
    for i in range(1, count + 1):
        s.sendto(f"{tag}-{i}".encode(), (host, port))
        if nowait:
            continue
        try:
            while True:
                data, _ = s.recvfrom(65536)
                words = data.decode().split()
                # An answer to an earlier datagram that came late is no
                # answer to this one.
                if len(words) == 4 and words[3] == f"{tag}-{i}":
                    break
            print(f"reply {i} {' '.join(words[:3])}", flush=True)
        except OSError:
            print(f"lost {i}", flush=True)
    if nowait:
        print(f"sent {count}", flush=True)
    return 0


def main():
    global WAIT
    a = sys.argv[1:]
    if len(a) >= 2 and a[0] == "-w":
        WAIT = float(a[1])
        a = a[2:]
    if a[:2] == ["server", "tcp"] and len(a) == 4:
        tcp_server(int(a[2]), a[3])
    elif a[:2] == ["server", "udp"] and len(a) == 5:
        udp_server(int(a[2]), a[3], a[4])
    elif a[:2] == ["client", "tcp"] and len(a) in (4, 5):
        return tcp_client(a[2], int(a[3]), a[4] if len(a) == 5 else None)
    elif a[:2] == ["client", "udp"] and len(a) in (7, 8):
        if len(a) == 8 and a[7] != "nowait":
            sys.exit(__doc__)
        return udp_client(a[2], int(a[3]), a[4], int(a[5]), a[6], len(a) == 8)
    else:
        sys.exit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
