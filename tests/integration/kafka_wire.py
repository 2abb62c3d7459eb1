"""Hand-built Kafka wire frames for tests that must send what no well-behaved
client sends: struct-packed request headers and bodies, RecordBatch v2 with
a pure-Python CRC-32C, magic 0/1 message sets, and a blocking Connection.

Response bodies are decoded with kafka-python's protocol classes where they
exist (they are independent of Eddy's generated codecs).
"""

import io
import socket
import struct
import time
import zlib

# ---------------------------------------------------------------- CRC-32C

def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    table = _CRC32C
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the standard check value

# ---------------------------------------------------------------- primitives


def varint(n):
    """Zig-zag varint (signed), as records use."""
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        b = z & 0x7F
        z >>= 7
        if z:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def uvarint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def string(s):
    if s is None:
        return struct.pack(">h", -1)
    b = s.encode() if isinstance(s, str) else s
    return struct.pack(">h", len(b)) + b


def compact_string(s):
    if s is None:
        return uvarint(0)
    b = s.encode() if isinstance(s, str) else s
    return uvarint(len(b) + 1) + b


def nbytes(b):
    if b is None:
        return struct.pack(">i", -1)
    return struct.pack(">i", len(b)) + b


def array(items):
    return struct.pack(">i", len(items)) + b"".join(items)

# ---------------------------------------------------------------- records


def record(offset_delta, key, value, headers=(), timestamp_delta=0):
    body = b"\x00" + varint(timestamp_delta) + varint(offset_delta)
    body += varint(-1) if key is None else varint(len(key)) + key
    body += varint(-1) if value is None else varint(len(value)) + value
    body += varint(len(headers))
    for hk, hv in headers:
        hkb = hk.encode()
        body += varint(len(hkb)) + hkb
        body += varint(-1) if hv is None else varint(len(hv)) + hv
    return varint(len(body)) + body


def record_batch(records, base_timestamp=None, base_offset=0, attributes=0):
    """A RecordBatch v2 (magic 2, uncompressed unless attributes say
    otherwise) of (key, value, headers) tuples, with a correct CRC-32C."""
    if base_timestamp is None:
        base_timestamp = int(time.time() * 1000)
    recs = b"".join(record(i, k, v, h) for i, (k, v, h) in enumerate(records))
    after_crc = struct.pack(">hiqqqhii", attributes, len(records) - 1, base_timestamp, base_timestamp,
                            -1, -1, -1, len(records)) + recs
    crc = crc32c(after_crc)
    # batchLength counts from partitionLeaderEpoch to the end.
    batch_length = 4 + 1 + 4 + len(after_crc)
    return struct.pack(">qiibI", base_offset, batch_length, 0, 2, crc) + after_crc


# Offset of the CRC and of the first byte it covers in a v2 batch.
BATCH_CRC_OFFSET = 17
BATCH_ATTRIBUTES_OFFSET = 21


def legacy_message_set(messages, magic=1, timestamp=None):
    """A magic 0/1 message set of (key, value) pairs (CRC-32, not -32C)."""
    if timestamp is None:
        timestamp = int(time.time() * 1000)
    out = b""
    for i, (key, value) in enumerate(messages):
        body = struct.pack(">bb", magic, 0)
        if magic == 1:
            body += struct.pack(">q", timestamp)
        body += nbytes(key) + nbytes(value)
        msg = struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF) + body
        out += struct.pack(">qi", i, len(msg)) + msg
    return out


def parse_batches(data):
    """Splits a fetch's records bytes into (base_offset, last_offset, batch
    bytes) for every complete v2 batch (a trailing partial batch is
    ignored, as clients do)."""
    out = []
    pos = 0
    while pos + 12 <= len(data):
        base_offset, length = struct.unpack_from(">qi", data, pos)
        end = pos + 12 + length
        if length < 49 or end > len(data):
            break
        last_delta = struct.unpack_from(">i", data, pos + 23)[0]
        out.append((base_offset, base_offset + last_delta, data[pos:end]))
        pos = end
    return out


def parse_records(batch):
    """The (offset, key, value, headers) of an uncompressed v2 batch, after
    checking its CRC. Raises ValueError on anything malformed."""
    base_offset, length, _epoch, magic, crc = struct.unpack_from(">qiibI", batch, 0)
    if magic != 2:
        raise ValueError("magic %d" % magic)
    if crc32c(batch[21:12 + length]) != crc:
        raise ValueError("bad CRC")
    attributes = struct.unpack_from(">h", batch, 21)[0]
    if attributes & 7:
        raise ValueError("compressed batch")
    count = struct.unpack_from(">i", batch, 57)[0]
    r = io.BytesIO(batch[61:12 + length])

    def rv():
        shift = 0
        result = 0
        while True:
            b = r.read(1)
            if not b:
                raise ValueError("truncated varint")
            result |= (b[0] & 0x7F) << shift
            shift += 7
            if not b[0] & 0x80:
                return (result >> 1) ^ -(result & 1)

    def rbytes():
        n = rv()
        return None if n < 0 else r.read(n)

    out = []
    for _ in range(count):
        rv()  # length
        r.read(1)  # attributes
        rv()  # timestamp delta
        delta = rv()
        key = rbytes()
        value = rbytes()
        headers = []
        for _ in range(rv()):
            hk = rbytes().decode()
            headers.append((hk, rbytes()))
        out.append((base_offset + delta, key, value, headers))
    return out

# ---------------------------------------------------------------- requests


def request_header(api_key, version, correlation_id, client_id="eddy-it", flexible=False):
    h = struct.pack(">hhi", api_key, version, correlation_id) + string(client_id)
    if flexible:
        h += b"\x00"  # no tagged fields
    return h


def frame(payload):
    return struct.pack(">i", len(payload)) + payload


def api_versions_v0():
    return b""


def metadata_v1(topics):
    """Metadata v1 body; topics None asks for all topics."""
    if topics is None:
        return struct.pack(">i", -1)
    return array([string(t) for t in topics])


def produce_v3(topic, partition, records, acks=-1, timeout_ms=10000):
    return (string(None) + struct.pack(">hi", acks, timeout_ms) +
            array([string(topic) + array([struct.pack(">i", partition) + nbytes(records)])]))


def fetch_v4(topic, partition, offset, max_bytes=1 << 20, max_wait_ms=0, min_bytes=0):
    return (struct.pack(">iiiib", -1, max_wait_ms, min_bytes, max_bytes, 0) +
            array([string(topic) + array([struct.pack(">iqi", partition, offset, max_bytes)])]))


def list_offsets_v1(topic, partition, timestamp=-1):
    return struct.pack(">i", -1) + array([string(topic) + array([struct.pack(">iq", partition, timestamp)])])


def create_topics_v1(name, partitions=1, replication=1, configs=(), validate_only=False, timeout_ms=10000):
    topic = (string(name) + struct.pack(">ih", partitions, replication) + array([]) +
             array([string(k) + string(v) for k, v in configs]))
    return array([topic]) + struct.pack(">ib", timeout_ms, 1 if validate_only else 0)


class Closed(Exception):
    """The broker closed the connection."""


class Connection:
    """A blocking Kafka connection that sends raw frames."""

    def __init__(self, port, host="127.0.0.1", timeout=10):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.correlation_id = 0

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, api_key, version, body, flexible=False, client_id="eddy-it"):
        """Sends one request; returns its correlation id."""
        self.correlation_id += 1
        self.send_raw(frame(request_header(api_key, version, self.correlation_id, client_id, flexible) + body))
        return self.correlation_id

    def _read_exactly(self, n):
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            try:
                k = self.sock.recv_into(view[got:])
            except ConnectionResetError:
                raise Closed("connection reset")
            if k == 0:
                raise Closed("connection closed after %d of %d bytes" % (got, n))
            got += k
        return bytes(buf)

    def receive(self, flexible_header=False):
        """Reads one response frame; returns (correlation id, body bytes)."""
        size = struct.unpack(">i", self._read_exactly(4))[0]
        payload = self._read_exactly(size)
        correlation_id = struct.unpack_from(">i", payload)[0]
        pos = 4
        if flexible_header:
            pos += 1  # empty tagged fields (Eddy sends none)
        return correlation_id, payload[pos:]

    def request(self, api_key, version, body, flexible=False, response_class=None):
        cid = self.send(api_key, version, body, flexible)
        got, payload = self.receive(flexible_header=flexible and api_key != 18)
        if got != cid:
            raise AssertionError("correlation id %d, want %d" % (got, cid))
        return response_class.decode(payload) if response_class is not None else payload

    def closed_by_peer(self, timeout=10):
        """True when the broker closes the connection (EOF or reset) within
        timeout without sending anything; False if it sends a byte or the
        connection stays open."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(1)
        except ConnectionResetError:
            return True
        except socket.timeout:
            return False
        return data == b""

# ---------------------------------------------------------------- conveniences


def produce(conn, topic, partition, records, acks=-1, timeout_ms=10000):
    """Produce v3 of raw records bytes; returns (error code, base offset)."""
    from kafka.protocol.produce import ProduceResponse
    response = conn.request(0, 3, produce_v3(topic, partition, records, acks, timeout_ms),
                            response_class=ProduceResponse[3])
    (_topic, partitions), = response.topics
    (_p, error_code, offset, _ts), = partitions
    return error_code, offset


def fetch(conn, topic, partition, offset, max_bytes=1 << 20):
    """One Fetch v4; returns (error code, high watermark, records bytes)."""
    from kafka.protocol.fetch import FetchResponse
    response = conn.request(1, 4, fetch_v4(topic, partition, offset, max_bytes), response_class=FetchResponse[4])
    (_topic, partitions), = response.topics
    (_p, error_code, high_watermark, _lso, _aborted, records), = partitions
    return error_code, high_watermark, records or b""


def fetch_all(conn, topic, partition, max_bytes=1 << 20):
    """Every batch of a partition from offset 0 to the high watermark, as a
    list of (base offset, last offset, batch bytes). Raises AssertionError on
    a fetch error or a gap between batches."""
    out = []
    offset = 0
    while True:
        error_code, high_watermark, records = fetch(conn, topic, partition, offset, max_bytes)
        if error_code:
            raise AssertionError("fetch %s-%d at %d: error %d" % (topic, partition, offset, error_code))
        batches = [b for b in parse_batches(records) if b[1] >= offset]
        for base, last, data in batches:
            if base > offset:
                raise AssertionError("gap in %s-%d: batch at %d, expected %d" % (topic, partition, base, offset))
            out.append((base, last, data))
            offset = last + 1
        if offset >= high_watermark:
            return out
        if not batches:
            raise AssertionError("fetch %s-%d at %d below the high watermark %d returned no batch"
                                 % (topic, partition, offset, high_watermark))
