#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""syslog_sink.py SOCKET FILE SECONDS: receives syslog datagrams on the
Unix socket SOCKET (what /dev/log is to syslog(3)) for at most SECONDS,
writing each as one line of FILE as it arrives. SIGTERM ends it."""
import os
import signal
import socket
import sys
import time


def main():
    path, out, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    end = time.monotonic() + limit
    with open(out, 'a') as f:
        while time.monotonic() < end:
            s.settimeout(max(0.01, end - time.monotonic()))
            try:
                msg = s.recv(65536)
            except socket.timeout:
                continue
            f.write(msg.decode('utf-8', 'replace').rstrip('\0\n') + '\n')
            f.flush()


if __name__ == '__main__':
    try:
        main()
    finally:
        if len(sys.argv) > 1 and os.path.exists(sys.argv[1]):
            os.unlink(sys.argv[1])
