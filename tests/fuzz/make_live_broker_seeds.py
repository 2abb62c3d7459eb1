#!/usr/bin/python3
"""Writes the seeds of fuzz_live_broker (tests/fuzz/seeds/live_broker/).

A seed is the fuzzer's input format (fuzz_live_broker.cc): one byte giving
the number of cuts (low 4 bits), the cuts (big-endian uint16 offsets), then
the client's byte stream of size-prefixed request frames. The sessions are
the captured client frames (tests/unit/protocol/data, as kcat and
kafka-python sent them) and hand-encoded requests of the APIs no capture
covers (non-flexible versions: consumer groups, admin, idempotence).

    /usr/bin/python3 tests/fuzz/make_live_broker_seeds.py
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "unit", "protocol", "data")
OUT = os.path.join(HERE, "seeds", "live_broker")


def i8(v): return struct.pack(">b", v)
def i16(v): return struct.pack(">h", v)
def i32(v): return struct.pack(">i", v)
def i64(v): return struct.pack(">q", v)
def s(text): return i16(-1) if text is None else i16(len(text)) + text.encode()
def b(data): return i32(len(data)) + data
def arr(items): return i32(len(items)) + b"".join(items)


def request(api, version, correlation, body, client="fuzz-seed"):
    """A request frame with header v1 (non-flexible), size prefix included."""
    frame = i16(api) + i16(version) + i32(correlation) + s(client) + body
    return i32(len(frame)) + frame


def captured(name):
    with open(os.path.join(DATA, name), "rb") as f:
        frame = f.read()
    return i32(len(frame)) + frame


def seed(stream, cuts=()):
    cuts = list(cuts)[:15]
    return bytes([len(cuts)]) + b"".join(struct.pack(">H", c) for c in cuts) + stream


# The consumer protocol's subscription and assignment (version 0).
SUBSCRIPTION = i16(0) + arr([s("capture"), s("sensors")]) + b(b"")
ASSIGNMENT = i16(0) + arr([s("capture") + arr([i32(0)]), s("sensors") + arr([i32(0), i32(1), i32(2)])]) + b(b"")


def main():
    os.makedirs(OUT, exist_ok=True)
    kcat = [captured(n) for n in ("kcat_api_versions_v3.bin", "kcat_metadata_v4.bin",
                                  "kcat_produce_v7.bin", "kcat_fetch_v11.bin")]
    python = [captured(n) for n in ("kafka_python_api_versions_v0.bin", "kafka_python_metadata_v0.bin",
                                    "kafka_python_produce_v7.bin", "kafka_python_fetch_v4.bin")]
    seeds = {}
    seeds["kcat_session"] = seed(b"".join(kcat))
    seeds["kcat_session_cut"] = seed(b"".join(kcat), [3, 41, 100, 200])
    seeds["kafka_python_session"] = seed(b"".join(python))
    seeds["kafka_python_session_cut"] = seed(b"".join(python), [1, 2, 60, 61, 250])
    for n in sorted(os.listdir(DATA)):
        if n.endswith(".bin"):
            seeds["one_" + n[:-4]] = seed(captured(n))

    # Consumer group: find the coordinator, join (twice: KIP-394's member id),
    # sync, heartbeat, commit, fetch offsets, describe, list, leave, delete.
    find = request(10, 0, 1, s("g1"))
    join = request(11, 0, 2, s("g1") + i32(10000) + s("") + s("consumer") + arr([s("range") + b(SUBSCRIPTION)]))
    sync = request(14, 0, 3, s("g1") + i32(1) + s("m") + arr([s("m") + b(ASSIGNMENT)]))
    heartbeat = request(12, 0, 4, s("g1") + i32(1) + s("m"))
    commit = request(8, 2, 5, s("g1") + i32(1) + s("m") + i64(-1) +
                     arr([s("capture") + arr([i32(0) + i64(1) + s("meta")])]))
    fetch_offsets = request(9, 1, 6, s("g1") + arr([s("capture") + arr([i32(0)])]))
    describe = request(15, 0, 7, arr([s("g1")]))
    list_groups = request(16, 0, 8, b"")
    leave = request(13, 0, 9, s("g1") + s("m"))
    delete_groups = request(42, 0, 10, arr([s("g1")]))
    seeds["group_session"] = seed(find + join + sync + heartbeat + commit + fetch_offsets + describe +
                                  list_groups + leave + delete_groups)

    # Admin: create a topic, add partitions, describe and alter its configs,
    # list offsets, delete records, describe log dirs, delete the topic.
    create = request(19, 0, 1, arr([s("fuzzed") + i32(2) + i16(1) + arr([]) +
                                    arr([s("segment.bytes") + s("65536")])]) + i32(1000))
    partitions = request(37, 0, 2, arr([s("fuzzed") + i32(3) + i32(-1)]) + i32(1000) + i8(0))
    describe_configs = request(32, 0, 3, arr([i8(2) + s("fuzzed") + i32(-1)]))
    alter_configs = request(33, 0, 4, arr([i8(2) + s("fuzzed") + arr([s("retention.ms") + s("60000")])]) + i8(0))
    list_offsets = request(2, 1, 5, i32(-1) + arr([s("capture") + arr([i32(0) + i64(-1)])]))
    delete_records = request(21, 0, 6, arr([s("capture") + arr([i32(0) + i64(0)])]) + i32(1000))
    log_dirs = request(35, 0, 7, i32(-1))
    leader_epoch = request(23, 0, 8, arr([s("capture") + arr([i32(0) + i32(0)])]))
    init_pid = request(22, 0, 9, s(None) + i32(60000))
    metadata = request(3, 1, 10, arr([s("fuzzed"), s("new-topic")]))
    delete = request(20, 0, 11, arr([s("fuzzed")]) + i32(1000))
    seeds["admin_session"] = seed(create + partitions + describe_configs + alter_configs + list_offsets +
                                  delete_records + log_dirs + leader_epoch + init_pid + metadata + delete)

    # Pipelined produces, then a fetch of what they wrote.
    produce = captured("kcat_produce_v7.bin")
    with open(os.path.join(DATA, "kcat_fetch_v11.bin"), "rb") as f:
        fetch = f.read()
    seeds["produce_fetch"] = seed(produce + produce + i32(len(fetch)) + fetch)

    for name, data in seeds.items():
        with open(os.path.join(OUT, name + ".bin"), "wb") as f:
            f.write(data)
    print(f"{len(seeds)} seeds in {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
