"""kcat (librdkafka) against Eddy: 100,000 keyed messages produced to a
3-partition topic come back identical, each key in one partition, every
partition in production order with contiguous offsets from 0."""

import subprocess

import eddy_fixture
import kafka_wire

TOPIC = "kcat-keyed"
PARTITIONS = 3
COUNT = 100_000
KEYS = 997


def kcat(broker, *args, stdin=None, timeout=120):
    return subprocess.run(["kcat", "-b", broker.bootstrap] + list(args), input=stdin, capture_output=True,
                          timeout=timeout)


def body(broker, checks):
    with kafka_wire.Connection(broker.port) as conn:
        from kafka.protocol.admin import CreateTopicsResponse
        response = conn.request(19, 1, kafka_wire.create_topics_v1(TOPIC, PARTITIONS),
                                response_class=CreateTopicsResponse[1])
        checks.equal("create topic with 3 partitions", [(t[0], t[1]) for t in response.topic_errors], [(TOPIC, 0)])

    listing = kcat(broker, "-L", "-t", TOPIC)
    checks.check("kcat -L sees 3 partitions", b"3 partitions" in listing.stdout, listing.stdout + listing.stderr)

    produced = []  # (key, value) in production order
    lines = []
    for i in range(COUNT):
        key = "key-%03d" % (i % KEYS)
        value = "value-%06d-%s" % (i, "x" * (i % 50))
        produced.append((key, value))
        lines.append("%s\t%s" % (key, value))
    result = kcat(broker, "-P", "-t", TOPIC, "-K", "\t", "-X", "acks=all", "-X", "linger.ms=20",
                  stdin=("\n".join(lines) + "\n").encode())
    checks.equal("kcat producer exit code", result.returncode, 0)
    checks.check("kcat producer reports no delivery failure", b"fail" not in result.stderr.lower(), result.stderr[-2000:])

    index_of = {value: i for i, (_, value) in enumerate(produced)}
    consumed = {}
    key_partition = {}
    key_errors = []
    for p in range(PARTITIONS):
        out = kcat(broker, "-C", "-t", TOPIC, "-p", str(p), "-o", "beginning", "-e", "-f", "%p\t%o\t%k\t%s\n")
        checks.equal("kcat consumer exit code, partition %d" % p, out.returncode, 0)
        rows = [line.split("\t") for line in out.stdout.decode().splitlines()]
        consumed[p] = rows
        offsets = [int(r[1]) for r in rows]
        checks.equal("partition %d: offsets contiguous from 0" % p, offsets, list(range(len(rows))))
        checks.check("partition %d: partition field" % p, all(r[0] == str(p) for r in rows))
        order = [index_of.get(r[3], -1) for r in rows]
        checks.check("partition %d: messages in production order" % p,
                     all(a < b for a, b in zip(order, order[1:])) and -1 not in order)
        for r in rows:
            i = index_of.get(r[3])
            if i is None or produced[i][0] != r[2]:
                key_errors.append(r)
            if key_partition.setdefault(r[2], p) != p:
                key_errors.append(("key in two partitions", r))
        checks.check("partition %d: holds a fair share (%d messages)" % (p, len(rows)), len(rows) > COUNT // 5)

    checks.equal("every key and value exactly as produced", key_errors[:5], [])
    all_values = sorted(r[3] for rows in consumed.values() for r in rows)
    checks.equal("consumed count", len(all_values), COUNT)
    checks.check("consumed set equals produced set, no duplicates", all_values == sorted(v for _, v in produced))
    checks.equal("every key seen", len(key_partition), KEYS)

    # A consumer starting in the middle of a partition.
    mid = len(consumed[0]) // 2
    out = kcat(broker, "-C", "-t", TOPIC, "-p", "0", "-o", str(mid), "-c", "5", "-f", "%o\t%k\t%s\n")
    rows = [line.split("\t") for line in out.stdout.decode().splitlines()]
    checks.equal("kcat -o %d -c 5 on partition 0" % mid, rows,
                 [[str(mid + j), consumed[0][mid + j][2], consumed[0][mid + j][3]] for j in range(5)])

    # Offsets as kcat's query mode sees them (ListOffsets): the end offsets
    # are the message counts.
    for p in range(PARTITIONS):
        q = kcat(broker, "-Q", "-t", "%s:%d:-1" % (TOPIC, p))
        checks.check("kcat -Q end offset of partition %d" % p,
                     ("%s [%d] offset %d" % (TOPIC, p, len(consumed[p]))).encode() in q.stdout, q.stdout + q.stderr)


if __name__ == "__main__":
    eddy_fixture.run_test(body)
