#!/usr/bin/python3
"""Broker throughput with a real client (kcat / librdkafka), each number set
against a peer measured in the same run on the same machine:

  produce acks=all   vs  sequential write + fdatasync of the same bytes in
                         the data directory's file system (the disk's limit)
  produce acks=1     vs  the same disk peer
  consume (kcat)     vs  sendfile(2) of the partition's segment files to a
                         loopback TCP socket (the zero-copy limit); kcat
                         decodes and prints every message, so this is
                         mostly the client's speed
  fetch (raw client) vs  the same peer: 4 MiB Fetch v4 requests from a
                         client that only counts the bytes, read the same
                         way as the peer's (Python recv)

Not run by ctest. Usage (from the build directory):
  EDDY_BIN=./eddy EDDY_SOURCE_DIR=.. /usr/bin/python3 ../tests/bench/broker_bench.py \
      [--mib 128] [--size 1024] [--dir /path/on/the/device/under/test]
Prints one line per measurement and a summary table; exit code 0 unless a
step failed (the ratios are reported, not judged)."""

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import eddy_fixture  # noqa: E402
import kafka_wire  # noqa: E402


def mib_per_s(nbytes, seconds):
    return nbytes / 2 ** 20 / seconds if seconds > 0 else float("inf")


def disk_peer(directory, total, sync_every):
    """Writes total bytes in 1 MiB writes, fdatasync every sync_every bytes
    and at the end; returns MiB/s."""
    chunk = os.urandom(1 << 20)
    path = os.path.join(directory, "disk-peer.tmp")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        start = time.monotonic()
        written = since_sync = 0
        while written < total:
            n = os.write(fd, chunk[:min(len(chunk), total - written)])
            written += n
            since_sync += n
            if since_sync >= sync_every:
                os.fdatasync(fd)
                since_sync = 0
        os.fdatasync(fd)
        return mib_per_s(written, time.monotonic() - start)
    finally:
        os.close(fd)
        os.unlink(path)


def sendfile_peer(paths):
    """sendfile(2)s the files to a loopback TCP socket whose reader discards
    the bytes; returns (bytes, MiB/s)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    received = [0]

    def reader():
        conn, _ = listener.accept()
        buf = bytearray(1 << 20)
        view = memoryview(buf)
        while True:
            n = conn.recv_into(view)
            if n == 0:
                break
            received[0] += n
        conn.close()

    thread = threading.Thread(target=reader)
    thread.start()
    out = socket.create_connection(listener.getsockname())
    start = time.monotonic()
    total = 0
    for path in paths:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            offset = 0
            while offset < size:
                n = os.sendfile(out.fileno(), f.fileno(), offset, size - offset)
                if n == 0:
                    break
                offset += n
            total += offset
    out.close()
    thread.join()
    elapsed = time.monotonic() - start
    listener.close()
    return total, mib_per_s(received[0], elapsed)


def kcat_produce(broker, topic, data_file, acks):
    cmd = ["kcat", "-P", "-b", broker.bootstrap, "-t", topic, "-p", "0", "-X", "acks=%s" % acks,
           "-X", "linger.ms=5", "-X", "batch.size=1000000", "-X", "queue.buffering.max.kbytes=262144",
           "-l", data_file]
    start = time.monotonic()
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    elapsed = time.monotonic() - start
    if result.returncode != 0:
        raise RuntimeError("kcat produce failed: %s" % result.stderr[-2000:])
    return elapsed


def kcat_consume(broker, topic, count):
    cmd = ["kcat", "-C", "-b", broker.bootstrap, "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q",
           "-f", "%s", "-X", "fetch.message.max.bytes=4194304"]
    start = time.monotonic()
    with open(os.devnull, "wb") as sink:
        result = subprocess.run(cmd, stdout=sink, stderr=subprocess.PIPE, timeout=1800)
    elapsed = time.monotonic() - start
    if result.returncode != 0:
        raise RuntimeError("kcat consume failed: %s" % result.stderr[-2000:])
    return elapsed


def raw_fetch(broker, topic, max_bytes=4 << 20):
    """Fetches the partition from offset 0 to its end with Fetch v4 into one
    reused buffer, walking only the batch headers (the peer's reader does no
    less); returns (record bytes, seconds)."""
    import struct
    name = topic.encode()
    buf = bytearray(max_bytes + (1 << 16))
    view = memoryview(buf)
    total = 0
    offset = 0
    with kafka_wire.Connection(broker.port, timeout=60) as conn:
        start = time.monotonic()
        while True:
            conn.send(1, 4, kafka_wire.fetch_v4(topic, 0, offset, max_bytes))
            size = struct.unpack(">i", conn._read_exactly(4))[0]
            if size > len(buf):
                buf = bytearray(size)
                view = memoryview(buf)
            got = 0
            while got < size:
                n = conn.sock.recv_into(view[got:size])
                if n == 0:
                    raise RuntimeError("connection closed")
                got += n
            # correlation id, throttle, 1 topic (name), 1 partition: index,
            # error, high watermark, last stable offset, aborted (-1/0), records.
            pos = 4 + 4 + 4 + 2 + len(name) + 4 + 4
            error_code, high_watermark, _lso, aborted = struct.unpack_from(">hqqi", buf, pos)
            if error_code:
                raise RuntimeError("fetch error %d at offset %d" % (error_code, offset))
            pos += 2 + 8 + 8 + 4 + 16 * max(aborted, 0)
            length = struct.unpack_from(">i", buf, pos)[0]
            pos += 4
            end = pos + max(length, 0)
            last = -1
            while pos + 61 <= end:
                base, batch_length = struct.unpack_from(">qi", buf, pos)
                if pos + 12 + batch_length > end:
                    break
                last = base + struct.unpack_from(">i", buf, pos + 23)[0]
                pos += 12 + batch_length
            if last < 0:
                break
            total += max(length, 0)
            offset = last + 1
            if offset >= high_watermark:
                break
        return total, time.monotonic() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, default=128, help="MiB of message values per run")
    parser.add_argument("--size", type=int, default=1024, help="message value size in bytes")
    parser.add_argument("--dir", help="where the data directory goes (default: a temporary directory)")
    args = parser.parse_args()
    count = args.mib * 2 ** 20 // args.size
    payload = args.size * count

    overrides = {
        # One segment budget big enough for the whole run: nothing recycled.
        "log.retention.bytes": max(2 * payload, 64 << 20),
        "message.max.bytes": 4 << 20,
    }
    broker = eddy_fixture.Broker(overrides=overrides)
    if args.dir:
        broker.tmp = tempfile.mkdtemp(prefix="eddy-bench-", dir=args.dir)
        broker.data_dir = os.path.join(broker.tmp, "data")
    data_file = os.path.join(broker.tmp, "messages.txt")
    with open(data_file, "wb") as f:
        for i in range(count):
            value = (b"%010d-" % i) + b"v" * (args.size - 11)
            f.write(value + b"\n")
    rows = []
    try:
        broker.start()
        os.makedirs(broker.data_dir, exist_ok=True)
        print("eddy on %s, data in %s; %d messages of %d bytes (%.0f MiB)" % (
            broker.bootstrap, broker.data_dir, count, args.size, payload / 2 ** 20), flush=True)

        disk = disk_peer(broker.data_dir, payload, 8 << 20)
        print("peer: disk write + fdatasync every 8 MiB: %.1f MiB/s" % disk, flush=True)

        for acks, topic in (("all", "bench-acks-all"), ("1", "bench-acks-1")):
            elapsed = kcat_produce(broker, topic, data_file, acks)
            rate = mib_per_s(payload, elapsed)
            print("kcat produce acks=%s: %.2f s, %.1f MiB/s, %.0f msg/s" % (acks, elapsed, rate, count / elapsed),
                  flush=True)
            rows.append(("produce acks=%s" % acks, rate, "disk write+fdatasync", disk))

        elapsed = kcat_consume(broker, "bench-acks-all", count)
        rate = mib_per_s(payload, elapsed)
        print("kcat consume: %.2f s, %.1f MiB/s, %.0f msg/s" % (elapsed, rate, count / elapsed), flush=True)
        partition_dir = os.path.join(broker.data_dir, "bench-acks-all-0")
        segments = sorted(os.path.join(partition_dir, f) for f in os.listdir(partition_dir) if f.endswith(".log"))
        nbytes, loopback = sendfile_peer(segments)
        print("peer: sendfile of %d segment files (%.0f MiB) to loopback TCP: %.1f MiB/s" % (
            len(segments), nbytes / 2 ** 20, loopback), flush=True)
        rows.append(("consume (kcat)", rate, "loopback sendfile", loopback))
        fetched, elapsed = raw_fetch(broker, "bench-acks-all")
        rate = mib_per_s(fetched, elapsed)
        print("raw Fetch v4 client, 4 MiB fetches: %.0f MiB in %.2f s, %.1f MiB/s" % (
            fetched / 2 ** 20, elapsed, rate), flush=True)
        rows.append(("fetch (raw client)", rate, "loopback sendfile", loopback))

        rc = broker.stop()
        if rc != 0:
            raise RuntimeError("eddy exited with %d" % rc)
    except Exception as e:  # noqa: BLE001
        print("bench failed: %s\n%s" % (e, broker.log_text()[-3000:]))
        broker.close()
        return 1
    broker.close()
    print("\n%-18s %12s   %-22s %12s %8s" % ("measurement", "MiB/s", "peer", "peer MiB/s", "ratio"))
    for name, rate, peer, peer_rate in rows:
        print("%-18s %12.1f   %-22s %12.1f %8.2f" % (name, rate, peer, peer_rate, rate / peer_rate))
    return 0


if __name__ == "__main__":
    sys.exit(main())
