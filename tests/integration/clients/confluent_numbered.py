"""confluent-kafka (PyPI, with its bundled librdkafka) writing and reading
numbered messages, for tests/bench/replication_faults.py (and its short run,
test_cluster_replication_faults.py). Runs under the venv of
newest_clients.venv_python(), never under /usr/bin/python3.

    confluent_numbered.py produce BOOTSTRAP TOPIC PARTITIONS OUT STOP_FILE MAX IN_FLIGHT [RATE]
    confluent_numbered.py consume BOOTSTRAP GROUP TOPIC OUT STOP_FILE
    confluent_numbered.py read BOOTSTRAP TOPIC END,END,... OUT TIMEOUT_S

produce: an idempotent acks=all producer sends the numbers 0, 1, 2, ...
(value: the number in decimal, no key) to partition number % PARTITIONS, as
fast as it can (or at most RATE a second) with at most IN_FLIGHT messages
not yet reported, until MAX were sent (0: no limit) or STOP_FILE exists;
then it flushes (every message reported, at the latest after
message.timeout.ms) and ends. OUT gets a line per delivery report and per
client error:
    d N PARTITION OFFSET T      acknowledged
    f N PARTITION ERROR T       failed (the broker may hold it or not)
    e T ERROR REASON            an error_cb event (F: a fatal one; ERROR
                                _DELIVERY_REPORT: a report it could not read)
    x SENT DELIVERED FAILED UNREPORTED T   the end
consume: a group member (auto commit) reads the topic until STOP_FILE
exists:
    m PARTITION OFFSET VALUE T  a record
    a T P,P,...  / r T ... / l T ...   assigned / revoked / lost
    e T ERROR REASON            a consumer error
    o T TEXT                    a librdkafka log line about an offset reset
                                or a log truncation
    x T
read: a fresh consumer (no group) assigned every partition from its first
offset reads until its position in partition p reached END[p] (or it met
the partition's end at or past it); OUT gets "m PARTITION OFFSET VALUE"
lines and "x POSITION,POSITION,..." at the end (exit 1 on the timeout).

T is time.monotonic(), the same clock (CLOCK_MONOTONIC) as the bench's.
librdkafka's logs go to stderr; the producer's include its idempotence
debug context (debug=eos, or EDDY_RDKAFKA_DEBUG): epoch bumps and why.
"""

import logging
import os
import sys
import time

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition


def base_conf(bootstrap):
    return {"bootstrap.servers": bootstrap, "client.id": "eddy-numbered", "broker.address.family": "v4"}


def produce(bootstrap, topic, partitions, out_path, stop_file, limit, in_flight, rate=0):
    out = open(out_path, "w", buffering=1 << 16)
    counts = {"delivered": 0, "failed": 0}

    def on_delivery(err, msg):
        # An exception raised here would surface later as a SystemError in
        # poll() (confluent-kafka): reported as a client error instead.
        try:
            n = int(msg.value())
            if err is None:
                counts["delivered"] += 1
                out.write("d %d %d %d %.4f\n" % (n, msg.partition(), msg.offset(), time.monotonic()))
            else:
                counts["failed"] += 1
                out.write("f %d %d %s %.4f\n" % (n, msg.partition(), err.name(), time.monotonic()))
        except Exception as e:  # noqa: BLE001
            out.write("e %.4f _DELIVERY_REPORT %s\n" % (time.monotonic(), repr((e, err, msg.value(), msg.partition(),
                                                                                msg.offset())).replace("\n", " ")))

    def on_error(err):
        out.write("%s %.4f %s %s\n" % ("F" if err.fatal() else "e", time.monotonic(), err.name(),
                                       err.str().replace("\n", " ")))

    conf = dict(base_conf(bootstrap), **{
        "enable.idempotence": True, "acks": "all",
        # Through every fault of the run: a message fails only after 2 min.
        "message.timeout.ms": 120000,
        # A request to a paused (SIGSTOP) leader is given up after 10 s.
        "request.timeout.ms": 10000,
        "linger.ms": 5,
        "on_delivery": on_delivery, "error_cb": on_error})
    # librdkafka's account of its idempotence state (epoch bumps and why,
    # drains), a few lines per fault, on stderr: the bench reads it.
    # EDDY_RDKAFKA_DEBUG picks other contexts (e.g. eos,msg,protocol).
    conf["debug"] = os.environ.get("EDDY_RDKAFKA_DEBUG") or "eos"
    p = Producer(conf)
    sent = 0
    began = last_flush = time.monotonic()
    stopped = False
    while not stopped:
        if limit and sent >= limit:
            p.poll(0.2)
            stopped = os.path.exists(stop_file)
        elif len(p) >= in_flight or (rate and sent >= rate * (time.monotonic() - began)):
            p.poll(0.01)
        else:
            try:
                p.produce(topic, value=b"%d" % sent, partition=sent % partitions)
                sent += 1
            except BufferError:
                p.poll(0.01)
            if sent % 256 == 0:
                p.poll(0)
        now = time.monotonic()
        if now - last_flush >= 0.2:
            out.flush()
            last_flush = now
            stopped = stopped or os.path.exists(stop_file)
    left = p.flush(180)
    out.write("x %d %d %d %d %.4f\n" % (sent, counts["delivered"], counts["failed"], left, time.monotonic()))
    out.close()


class _OffsetLog(logging.Handler):
    """librdkafka's log lines to stderr; those about an offset reset or a
    log truncation also to OUT, for the checker."""

    def __init__(self, out):
        super().__init__()
        self.out = out

    def emit(self, record):
        text = record.getMessage()
        sys.stderr.write(text + "\n")
        low = text.lower()
        if "reset" in low and "offset" in low or "truncat" in low:
            self.out.write("o %.4f %s\n" % (time.monotonic(), text.replace("\n", " ")))


def consume(bootstrap, group, topic, out_path, stop_file):
    out = open(out_path, "w", buffering=1 << 16)
    logger = logging.getLogger("rdkafka")
    logger.setLevel(logging.INFO)
    logger.addHandler(_OffsetLog(out))
    conf = dict(base_conf(bootstrap), **{
        "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": True,
        "session.timeout.ms": 10000, "heartbeat.interval.ms": 1000, "fetch.wait.max.ms": 500,
        "logger": logger})
    c = Consumer(conf)

    def event(kind):
        def on_event(_consumer, parts):
            out.write("%s %.4f %s\n" % (kind, time.monotonic(), ",".join(str(tp.partition) for tp in parts) or "-"))
        return on_event

    c.subscribe([topic], on_assign=event("a"), on_revoke=event("r"), on_lost=event("l"))
    last_flush = time.monotonic()
    while True:
        for m in c.consume(500, 0.2):
            if m.error():
                out.write("e %.4f %s %s\n" % (time.monotonic(), m.error().name(), m.error().str().replace("\n", " ")))
            else:
                out.write("m %d %d %s %.4f\n" % (m.partition(), m.offset(), m.value().decode(), time.monotonic()))
        now = time.monotonic()
        if now - last_flush >= 0.2:
            out.flush()
            last_flush = now
            if os.path.exists(stop_file):
                break
    c.close()
    out.write("x %.4f\n" % time.monotonic())
    out.close()


def read(bootstrap, topic, ends, out_path, timeout):
    ends = [int(e) for e in ends.split(",")]
    out = open(out_path, "w", buffering=1 << 20)
    c = Consumer(dict(base_conf(bootstrap), **{
        "group.id": "eddy-numbered-read", "enable.auto.commit": False, "enable.partition.eof": True,
        "fetch.wait.max.ms": 100}))
    c.assign([TopicPartition(topic, p, 0) for p in range(len(ends))])
    position = [0] * len(ends)
    deadline = time.monotonic() + timeout
    while any(position[p] < ends[p] for p in range(len(ends))) and time.monotonic() < deadline:
        for m in c.consume(10000, 0.5):
            p = m.partition()
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    position[p] = max(position[p], m.offset())
                else:
                    sys.stderr.write("read: %s\n" % m.error())
                continue
            out.write("m %d %d %s\n" % (p, m.offset(), m.value().decode()))
            position[p] = max(position[p], m.offset() + 1)
        for tp in c.position([TopicPartition(topic, p) for p in range(len(ends))]):
            if tp.offset >= 0:
                position[tp.partition] = max(position[tp.partition], tp.offset)
    c.close()
    out.write("x %s\n" % ",".join(str(x) for x in position))
    out.close()
    return 0 if all(position[p] >= ends[p] for p in range(len(ends))) else 1


def main(argv):
    what = argv[1]
    if what == "produce":
        bootstrap, topic, partitions, out, stop, limit, in_flight = argv[2:9]
        rate = int(argv[9]) if len(argv) > 9 else 0
        produce(bootstrap, topic, int(partitions), out, stop, int(limit), int(in_flight), rate)
        return 0
    if what == "consume":
        bootstrap, group, topic, out, stop = argv[2:7]
        consume(bootstrap, group, topic, out, stop)
        return 0
    if what == "read":
        bootstrap, topic, ends, out, timeout = argv[2:7]
        return read(bootstrap, topic, ends, out, float(timeout))
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
