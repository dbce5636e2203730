#!/usr/bin/env python3
"""Dependency-free CQL readiness probe (native protocol v4, stdlib only).

Usage: cql_probe.py [host] [port] [query]

Performs STARTUP + QUERY and prints the first column of the first row, e.g.
    $ cql_probe.py 127.0.0.1 9042
    5.0.9
Exit status: 0 on success, 1 on any error (message on stderr).
Used by scripts/services.sh to check that Cassandra really answers CQL, not
just that the port is open.
"""
import socket
import struct
import sys

VERSION = 0x04
OP_ERROR, OP_STARTUP, OP_READY, OP_QUERY, OP_RESULT = 0x00, 0x01, 0x02, 0x07, 0x08


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("connection closed by server")
        buf += chunk
    return buf


def request(sock, stream, opcode, body):
    sock.sendall(struct.pack(">BBhBi", VERSION, 0, stream, opcode, len(body)) + body)
    hdr = recv_exact(sock, 9)
    _ver, _flags, _stream, op, length = struct.unpack(">BBhBi", hdr)
    payload = recv_exact(sock, length)
    if op == OP_ERROR:
        code = struct.unpack(">i", payload[:4])[0]
        mlen = struct.unpack(">H", payload[4:6])[0]
        raise RuntimeError("CQL error 0x%04x: %s" % (code, payload[6:6 + mlen].decode("utf-8", "replace")))
    return op, payload


def cql_string(s):
    b = s.encode("utf-8")
    return struct.pack(">H", len(b)) + b


class Reader:
    def __init__(self, data):
        self.d, self.p = data, 0

    def take(self, n):
        v = self.d[self.p:self.p + n]
        self.p += n
        return v

    def int(self):
        return struct.unpack(">i", self.take(4))[0]

    def short(self):
        return struct.unpack(">H", self.take(2))[0]

    def string(self):
        return self.take(self.short()).decode("utf-8", "replace")

    def bytes(self):
        n = self.int()
        return None if n < 0 else self.take(n)

    def skip_type(self):
        tid = self.short()
        if tid == 0x0000:      # custom
            self.string()
        elif tid in (0x0020, 0x0022):  # list, set
            self.skip_type()
        elif tid == 0x0021:    # map
            self.skip_type()
            self.skip_type()
        elif tid == 0x0030:    # udt
            self.string()
            self.string()
            for _ in range(self.short()):
                self.string()
                self.skip_type()
        elif tid == 0x0031:    # tuple
            for _ in range(self.short()):
                self.skip_type()


def main():
    host = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1"
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 9042
    query = sys.argv[3] if len(sys.argv) > 3 else "SELECT release_version FROM system.local"
    try:
        with socket.create_connection((host, port), timeout=5) as sock:
            sock.settimeout(10)
            op, _ = request(sock, 1, OP_STARTUP, struct.pack(">H", 1) + cql_string("CQL_VERSION") + cql_string("3.0.0"))
            if op != OP_READY:
                raise RuntimeError("unexpected reply to STARTUP: opcode 0x%02x" % op)
            qb = query.encode("utf-8")
            body = struct.pack(">i", len(qb)) + qb + struct.pack(">HB", 0x0001, 0)  # consistency ONE, no flags
            op, payload = request(sock, 2, OP_QUERY, body)
            if op != OP_RESULT:
                raise RuntimeError("unexpected reply to QUERY: opcode 0x%02x" % op)
            r = Reader(payload)
            kind = r.int()
            if kind != 0x0002:  # not Rows (e.g. Void for DDL): success, nothing to print
                return 0
            flags, ncols = r.int(), r.int()
            if flags & 0x0002:
                r.bytes()  # paging state
            if not flags & 0x0004:
                if flags & 0x0001:
                    r.string(); r.string()
                for _ in range(ncols):
                    if not flags & 0x0001:
                        r.string(); r.string()
                    r.string()
                    r.skip_type()
            nrows = r.int()
            if nrows > 0 and ncols > 0:
                v = r.bytes()
                print("" if v is None else v.decode("utf-8", "replace"))
            return 0
    except Exception as e:  # noqa: BLE001 - a probe reports any failure the same way
        print("cql_probe: %s:%d: %s" % (host, port, e), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
