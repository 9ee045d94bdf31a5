#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""slow_clients.py HOST PORT N SECONDS: N HTTP clients that never finish
a request, for SECONDS at most. Each connects, sends the first line of a
request and then one byte of a header a second (a slowloris), and when
the server cuts it off connects again a tenth of a second later, so that
N clients keep trying all along. Non-blocking: a connection the server
does not take stays pending without holding up the others. Prints how
many times the server cut a client off when it ends (on SIGTERM too).
"""
import selectors
import signal
import socket
import sys
import time

HEAD = b'GET /metrics HTTP/1.1\r\nHost: slow\r\n'


def main():
    host, port, n, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    end = time.monotonic() + seconds
    sel = selectors.DefaultSelector()
    due = []  # (time, slot) of clients to connect
    conns = {}  # slot -> socket
    cut = 0
    stop = []

    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))

    def connect(slot):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex((host, port))
        conns[slot] = s
        sel.register(s, selectors.EVENT_WRITE, (slot, 'connecting'))

    def drop(slot):
        s = conns.pop(slot)
        sel.unregister(s)
        s.close()
        due.append((time.monotonic() + 0.1, slot))

    for slot in range(n):
        connect(slot)
    last_trickle = time.monotonic()
    while not stop and time.monotonic() < end:
        now = time.monotonic()
        for t, slot in [d for d in due if d[0] <= now]:
            due.remove((t, slot))
            connect(slot)
        for key, _ in sel.select(timeout=0.1):
            slot, state = key.data
            s = key.fileobj
            if state == 'connecting':
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    drop(slot)
                    continue
                try:
                    s.send(HEAD)
                except OSError:
                    drop(slot)
                    continue
                sel.modify(s, selectors.EVENT_READ, (slot, 'open'))
            else:
                # Readable: the server closed it or answered; either way
                # it is cut off.
                try:
                    s.recv(65536)
                except OSError:
                    pass
                cut += 1
                drop(slot)
        if time.monotonic() - last_trickle >= 1:
            last_trickle = time.monotonic()
            for slot, s in list(conns.items()):
                if sel.get_key(s).data[1] == 'open':
                    try:
                        s.send(b'X')
                    except OSError:
                        cut += 1
                        drop(slot)
    print(f'cut off {cut}', flush=True)


if __name__ == '__main__':
    main()
