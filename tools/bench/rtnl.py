# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Minimal rtnetlink and bpf(2) calls for the route-sync benchmark
(tools/bench/rtsync.py): routes written in bulk or one at a time with a
precise timestamp, and lookups and a count of a pinned BPF map. Only what
the benchmark needs; iproute2 and bpftool do the rest.
"""

import ctypes
import ipaddress
import os
import socket
import struct

NETLINK_ROUTE = 0
RTM_NEWROUTE, RTM_DELROUTE = 24, 25
NLMSG_ERROR = 2
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE, NLM_F_REPLACE = 0x1, 0x4, 0x200, 0x400, 0x100
RTA_DST, RTA_OIF, RTA_GATEWAY = 1, 4, 5
RT_TABLE_MAIN, RTPROT_BGP, RTN_UNICAST = 254, 186, 1


def _attr(kind, data):
    n = 4 + len(data)
    return struct.pack("HH", n, kind) + data + b"\0" * ((4 - n % 4) % 4)


class Rtnl:
    """A NETLINK_ROUTE socket of the calling process's network namespace."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        self.sock.bind((0, 0))
        self.seq = 0
        self._via = {}

    def close(self):
        self.sock.close()

    def _msg(self, cmd, prefix, gw, oif, flags):
        addr, _, plen = prefix.partition("/")
        fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
        dst = socket.inet_pton(fam, addr)
        body = struct.pack("BBBBBBBBI", fam, int(plen) if plen else len(dst) * 8, 0, 0,
                           RT_TABLE_MAIN, RTPROT_BGP, 0, RTN_UNICAST, 0)
        body += _attr(RTA_DST, dst)
        if cmd == RTM_NEWROUTE:
            via = self._via.get((gw, oif))
            if via is None:
                via = self._via[(gw, oif)] = (_attr(RTA_GATEWAY, socket.inet_pton(fam, gw)) +
                                              _attr(RTA_OIF, struct.pack("I", oif)))
            body += via
        self.seq += 1
        return struct.pack("IHHII", 16 + len(body), cmd, NLM_F_REQUEST | flags, self.seq, 0) + body

    def _errors(self, wait_seq=None):
        """Reads error messages (and the ack of wait_seq, blocking until it
        comes); returns [(seq, errno)] of the failures."""
        fails = []
        while True:
            try:
                data = self.sock.recv(1 << 20, 0 if wait_seq else socket.MSG_DONTWAIT)
            except BlockingIOError:
                return fails
            off = 0
            while off + 16 <= len(data):
                n, kind, _, seq, _ = struct.unpack_from("IHHII", data, off)
                if kind == NLMSG_ERROR:
                    err = -struct.unpack_from("i", data, off + 16)[0]
                    if err:
                        fails.append((seq, err))
                    if seq == wait_seq:
                        return fails
                off += (n + 3) & ~3

    def route(self, verb, prefix, gw=None, oif=0):
        """One route, acknowledged: verb add, replace or del. Raises OSError."""
        cmd = RTM_DELROUTE if verb == "del" else RTM_NEWROUTE
        flags = NLM_F_ACK | {"add": NLM_F_CREATE | NLM_F_EXCL,
                             "replace": NLM_F_CREATE | NLM_F_REPLACE, "del": 0}[verb]
        self.sock.send(self._msg(cmd, prefix, gw, oif, flags))
        fails = self._errors(self.seq)
        if fails:
            raise OSError(fails[0][1], f"route {verb} {prefix}: {os.strerror(fails[0][1])}")

    def bulk_add(self, routes, chunk=32768):
        """Adds [(prefix, gw, oif)] many to a send, only the last one
        acknowledged (the kernel reports every failure anyway). Returns the
        number of failures."""
        fails, buf = 0, []
        size = 0
        routes = list(routes)
        for i, (prefix, gw, oif) in enumerate(routes):
            last = i == len(routes) - 1
            m = self._msg(RTM_NEWROUTE, prefix, gw, oif,
                          NLM_F_CREATE | NLM_F_EXCL | (NLM_F_ACK if last else 0))
            buf.append(m)
            size += len(m)
            if size >= chunk or last:
                self.sock.send(b"".join(buf))
                buf, size = [], 0
                fails += len(self._errors(self.seq if last else None))
        return fails


# ---- bpf(2) on pinned maps -------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)
_NR_BPF = {"x86_64": 321, "aarch64": 280}[os.uname().machine]
BPF_MAP_LOOKUP_ELEM, BPF_MAP_GET_NEXT_KEY, BPF_OBJ_GET = 1, 4, 7


class _Attr(ctypes.Structure):
    _fields_ = [("a", ctypes.c_uint32), ("pad", ctypes.c_uint32),
                ("b", ctypes.c_uint64), ("c", ctypes.c_uint64),
                ("d", ctypes.c_uint64), ("rest", ctypes.c_uint8 * 96)]


def _bpf(cmd, attr):
    r = _libc.syscall(_NR_BPF, cmd, ctypes.byref(attr), ctypes.sizeof(attr))
    return r, (ctypes.get_errno() if r < 0 else 0)


def obj_get(path):
    """A file descriptor of the BPF object pinned at path."""
    p = ctypes.create_string_buffer(path.encode())
    attr = _Attr()
    # BPF_OBJ_GET: pathname (u64) first, then bpf_fd, file_flags.
    ctypes.memmove(ctypes.byref(attr), struct.pack("Q", ctypes.addressof(p)), 8)
    fd, err = _bpf(BPF_OBJ_GET, attr)
    if fd < 0:
        raise OSError(err, f"bpf(BPF_OBJ_GET) {path}: {os.strerror(err)}")
    return fd


class PinnedMap:
    """A pinned map with keys of ksize and values of vsize bytes."""

    def __init__(self, path, ksize, vsize):
        self.fd = obj_get(path)
        self.ksize = ksize
        self.key = ctypes.create_string_buffer(ksize)
        self.next = ctypes.create_string_buffer(ksize)
        self.val = ctypes.create_string_buffer(vsize)
        self.attr = _Attr()
        self.attr.a = self.fd

    def close(self):
        os.close(self.fd)

    def lookup_raw(self, key):
        """The value (bytes) of key (bytes), or None."""
        ctypes.memmove(self.key, key, self.ksize)
        self.attr.b = ctypes.addressof(self.key)
        self.attr.c = ctypes.addressof(self.val)
        self.attr.d = 0
        r, err = _bpf(BPF_MAP_LOOKUP_ELEM, self.attr)
        if r < 0:
            if err == 2:
                return None
            raise OSError(err, f"bpf(BPF_MAP_LOOKUP_ELEM): {os.strerror(err)}")
        return self.val.raw


class LpmMap(PinnedMap):
    """A pinned xnf_rt4 / xnf_rt6 (or its copy _b): key {u32 prefixlen,
    addr}, value {u32 type, u32 nh}."""

    def __init__(self, path, family):
        self.alen = 4 if family == 4 else 16
        super().__init__(path, 4 + self.alen, 8)

    def lookup(self, addr):
        """(type, nh) of the longest prefix matching addr (a string or an
        int), or None."""
        raw = addr.to_bytes(self.alen, "big") if isinstance(addr, int) else \
            ipaddress.ip_address(addr).packed
        v = self.lookup_raw(struct.pack("I", self.alen * 8) + raw)
        return struct.unpack("II", v) if v else None

    def _walk(self):
        """Walks the trie (an LPM trie has no batch calls and no counter),
        each key in self.key when the generator yields."""
        self.attr.b = 0
        self.attr.c = ctypes.addressof(self.next)
        key, nxt = self.key, self.next
        while True:
            r, err = _bpf(BPF_MAP_GET_NEXT_KEY, self.attr)
            if r < 0:
                if err == 2:
                    return
                raise OSError(err, f"bpf(BPF_MAP_GET_NEXT_KEY): {os.strerror(err)}")
            ctypes.memmove(key, nxt, self.ksize)
            self.attr.b = ctypes.addressof(key)
            yield

    def keys(self):
        """Yields every key as (address int, prefix length)."""
        for _ in self._walk():
            raw = self.key.raw
            yield int.from_bytes(raw[4:], "big"), struct.unpack_from("I", raw)[0]

    def count(self):
        """Entries (a walk: about 5 us a key from Python)."""
        return sum(1 for _ in self._walk())
