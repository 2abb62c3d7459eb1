#!/usr/bin/python3
"""Produce throughput of transactions vs idempotence (the ratios are the
figures): confluent-kafka (newest, newest_clients.venv_python()) sends
COUNT 100-byte messages to 3 partitions of one Eddy, acks=all, as an
idempotent producer and as a transactional one committing every 1 000 and
every 100 messages, ROUNDS times each, each run on a fresh topic; reported:
best and median msg/s per mode and each mode / idempotent, and the
broker's CPU time per message.

Not run by ctest. Usage, from the build directory:
  EDDY_BIN=./eddy EDDY_SOURCE_DIR=.. /usr/bin/python3 ../tests/bench/txn_bench.py [--count 200000] [--rounds 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import eddy_fixture  # noqa: E402
import newest_clients as nc  # noqa: E402

CLIENT = r'''
import json, sys, time
from confluent_kafka import Producer
bootstrap, topic, count, every = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
conf = {"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, "enable.idempotence": True,
        "broker.address.family": "v4"}
if every > 0:
    conf["transactional.id"] = "bench-" + topic
p = Producer(conf)
value = b"x" * 100
errors = []
def report(err, msg):
    if err is not None:
        errors.append(str(err))
if every > 0:
    p.init_transactions(30)
t0 = time.monotonic()
for i in range(count):
    if every > 0 and i % every == 0:
        p.begin_transaction()
    while True:
        try:
            p.produce(topic, value, partition=i % 3, on_delivery=report)
            break
        except BufferError:
            p.poll(0.01)
    if every > 0 and (i + 1) % every == 0:
        p.commit_transaction(30)
p.flush(60)
elapsed = time.monotonic() - t0
print(json.dumps({"elapsed": elapsed, "errors": errors[:3]}))
'''


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=200000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    python = nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python)
    modes = {"idempotent": 0, "txn/1000": 1000, "txn/100": 100}
    rates = {m: [] for m in modes}
    cpu = {m: [] for m in modes}
    broker = eddy_fixture.Broker(overrides={"log.retention.bytes": 1 << 30})
    try:
        broker.start()
        run = 0
        for _ in range(args.rounds):
            for mode, every in modes.items():
                run += 1
                topic = "bench-%d" % run
                nc.create_topic(broker, topic, 3)
                c0 = cpu_seconds(broker.proc.pid)
                r = subprocess.run([python, "-c", CLIENT, broker.bootstrap, topic, str(args.count), str(every)],
                                   capture_output=True, text=True, timeout=900)
                if r.returncode != 0:
                    raise SystemExit("%s: exit %d\n%s" % (mode, r.returncode, r.stderr[-3000:]))
                out = json.loads(r.stdout.strip().splitlines()[-1])
                if out["errors"]:
                    raise SystemExit("%s: delivery errors %r" % (mode, out["errors"]))
                rates[mode].append(args.count / out["elapsed"])
                cpu[mode].append((cpu_seconds(broker.proc.pid) - c0) / args.count * 1e6)
    finally:
        if broker.proc is not None:
            broker.stop()
    base = statistics.median(rates["idempotent"])
    print("%d messages of 100 bytes, 3 partitions, acks=all, %d rounds" % (args.count, args.rounds))
    print("| mode | best msg/s | median msg/s | median / idempotent | broker CPU us/msg (median) |")
    print("|---|---|---|---|---|")
    for mode in modes:
        med = statistics.median(rates[mode])
        print("| %s | %.0f | %.0f | %.2f | %.2f |" % (mode, max(rates[mode]), med, med / base,
                                                      statistics.median(cpu[mode])))


if __name__ == "__main__":
    main()
