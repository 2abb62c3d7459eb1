#!/usr/bin/python3
"""Captures the first request frames real Kafka clients send, for golden tests.

Run with Debian's interpreter (it has kafka-python), from the repository root:

    /usr/bin/python3 tests/unit/protocol/data/capture.py tests/unit/protocol/data

A throwaway broker on 127.0.0.1 answers just enough for the clients to go on:
ApiVersions (advertising the versions in src/protocol/generated/apis.h, so a
client picks what it would pick against Eddy) and Metadata (one broker, one
topic "capture" with one partition led by it). Every other request is
recorded and left unanswered; once a client has sent the request the scenario
waits for, it is stopped. Clients:

  kcat (librdkafka 2.0.2)   producer: `kcat -P`, consumer: `kcat -C -o 0`
  kafka-python 2.0.2        KafkaProducer.send, KafkaConsumer with assign+seek

For each client, the first frame of each api key is written as
<client>_<api>_v<version>.bin: the frame without its 4-byte size prefix
(request header + body), exactly as received. Test-only; not part of the build.
"""

import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
API_NAMES = {0: "produce", 1: "fetch", 2: "list_offsets", 3: "metadata", 18: "api_versions"}
TOPIC = "capture"


def advertised_apis():
    """(key, min, max) for every API in the generated table."""
    text = open(os.path.join(REPO, "src/protocol/generated/apis.h")).read()
    rows = re.findall(r'\{(\d+), "(\w+)", (\d+), (\d+), (\d+), (\d+)\}', text)
    return [(int(k), int(lo), int(hi)) for k, _, lo, hi, _, _ in rows]


# --- minimal encoders for the two responses the clients need ---------------


class Enc:
    def __init__(self, flexible):
        self.flexible = flexible
        self.b = bytearray()

    def i8(self, v):
        self.b += struct.pack(">b", v)

    def i16(self, v):
        self.b += struct.pack(">h", v)

    def i32(self, v):
        self.b += struct.pack(">i", v)

    def uvarint(self, v):
        while v >= 0x80:
            self.b.append((v & 0x7F) | 0x80)
            v >>= 7
        self.b.append(v)

    def string(self, s):
        if s is None:
            if self.flexible:
                self.uvarint(0)
            else:
                self.i16(-1)
            return
        data = s.encode()
        if self.flexible:
            self.uvarint(len(data) + 1)
        else:
            self.i16(len(data))
        self.b += data

    def array(self, items, write_item):
        if self.flexible:
            self.uvarint(len(items) + 1)
        else:
            self.i32(len(items))
        for item in items:
            write_item(item)

    def tags(self):
        if self.flexible:
            self.uvarint(0)


def api_versions_response(version, apis):
    e = Enc(version >= 3)
    e.i16(0)

    def api(a):
        e.i16(a[0])
        e.i16(a[1])
        e.i16(a[2])
        e.tags()

    e.array(apis, api)
    if version >= 1:
        e.i32(0)
    e.tags()
    return bytes(e.b)


def metadata_response(version, port):
    e = Enc(version >= 9)
    if version >= 3:
        e.i32(0)

    def broker(_):
        e.i32(1)
        e.string("127.0.0.1")
        e.i32(port)
        if version >= 1:
            e.string(None)
        e.tags()

    e.array([1], broker)
    if version >= 2:
        e.string("capture-cluster")
    if version >= 1:
        e.i32(1)

    def partition(_):
        e.i16(0)
        e.i32(0)
        e.i32(1)
        if version >= 7:
            e.i32(-1)
        e.array([1], e.i32)
        e.array([1], e.i32)
        if version >= 5:
            e.array([], e.i32)
        e.tags()

    def topic(_):
        e.i16(0)
        e.string(TOPIC)
        if version >= 10:
            e.b += bytes(range(1, 17))
        if version >= 1:
            e.i8(0)
        e.array([0], partition)
        if version >= 8:
            e.i32(-2147483648)
        e.tags()

    e.array([TOPIC], topic)
    if 8 <= version <= 10:
        e.i32(-2147483648)
    e.tags()
    return bytes(e.b)


# --- the throwaway broker --------------------------------------------------


class Broker:
    def __init__(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.apis = advertised_apis()
        self.frames = []  # (api_key, version, frame bytes)
        self.lock = threading.Lock()
        self.conns = []
        threading.Thread(target=self.accept_loop, daemon=True).start()

    def reset(self):
        with self.lock:
            self.frames = []
            for c in self.conns:
                try:
                    c.close()
                except OSError:
                    pass
            self.conns = []

    def accept_loop(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.conns.append(conn)
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    @staticmethod
    def read_exact(conn, n):
        data = b""
        while len(data) < n:
            chunk = conn.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def serve(self, conn):
        try:
            while True:
                (size,) = struct.unpack(">i", self.read_exact(conn, 4))
                frame = self.read_exact(conn, size)
                key, version, correlation = struct.unpack(">hhi", frame[:8])
                with self.lock:
                    self.frames.append((key, version, frame))
                if key == 18:
                    body = api_versions_response(min(version, 3), self.apis)
                    header = struct.pack(">i", correlation)  # always header v0
                elif key == 3:
                    body = metadata_response(version, self.port)
                    header = struct.pack(">i", correlation) + (b"\x00" if version >= 9 else b"")
                else:
                    continue
                payload = header + body
                conn.sendall(struct.pack(">i", len(payload)) + payload)
        except (EOFError, OSError):
            pass

    def wait_for(self, key, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                if any(f[0] == key for f in self.frames):
                    return True
            time.sleep(0.05)
        return False

    def first_frames(self):
        seen = {}
        with self.lock:
            for key, version, frame in self.frames:
                seen.setdefault(key, (version, frame))
        return seen


KAFKA_PYTHON_PRODUCER = """
import sys
from kafka import KafkaProducer
p = KafkaProducer(bootstrap_servers=sys.argv[1], client_id="capture-kafka-python", acks=1,
                  linger_ms=0, request_timeout_ms=60000, max_block_ms=60000)
p.send("capture", value=b"hello from kafka-python", key=b"k1", partition=0,
       timestamp_ms=1700000000000)
p.flush(timeout=60)
"""

KAFKA_PYTHON_CONSUMER = """
import sys
from kafka import KafkaConsumer, TopicPartition
c = KafkaConsumer(bootstrap_servers=sys.argv[1], client_id="capture-kafka-python",
                  enable_auto_commit=False, group_id=None, fetch_max_wait_ms=500)
tp = TopicPartition("capture", 0)
c.assign([tp])
c.seek(tp, 0)
c.poll(timeout_ms=30000)
"""


def scenarios(bootstrap):
    return [
        ("kcat", "produce", 0,
         ["kcat", "-b", bootstrap, "-P", "-t", TOPIC, "-p", "0", "-K", ":", "-X", "client.id=capture-kcat",
          "-X", "linger.ms=0"], b"k1:hello from kcat\n"),
        ("kcat", "fetch", 1,
         ["kcat", "-b", bootstrap, "-C", "-t", TOPIC, "-p", "0", "-o", "0", "-c", "1",
          "-X", "client.id=capture-kcat"], None),
        ("kafka_python", "produce", 0,
         ["/usr/bin/python3", "-c", KAFKA_PYTHON_PRODUCER, bootstrap], None),
        ("kafka_python", "fetch", 1,
         ["/usr/bin/python3", "-c", KAFKA_PYTHON_CONSUMER, bootstrap], None),
    ]


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    broker = Broker()
    bootstrap = "127.0.0.1:%d" % broker.port
    written = set()
    for client, what, wait_key, cmd, stdin in scenarios(bootstrap):
        broker.reset()
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        if stdin is not None:
            proc.stdin.write(stdin)
        proc.stdin.close()
        ok = broker.wait_for(wait_key, 60)
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if not ok:
            sys.exit("%s %s: no %s request within 60 s" % (client, what, API_NAMES[wait_key]))
        for key, (version, frame) in sorted(broker.first_frames().items()):
            name = "%s_%s_v%d.bin" % (client, API_NAMES.get(key, "api%d" % key), version)
            if name in written:
                continue  # the same request seen in an earlier scenario
            written.add(name)
            with open(os.path.join(out_dir, name), "wb") as f:
                f.write(frame)
            print("%-40s %5d bytes" % (name, len(frame)))


if __name__ == "__main__":
    main()
