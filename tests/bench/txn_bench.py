#!/usr/bin/python3
"""Produce throughput of transactions vs idempotence (the ratios are the
figures): confluent-kafka (newest, newest_clients.venv_python()) sends
COUNT 100-byte messages to 3 partitions of one Eddy, acks=all, as an
idempotent producer and as a transactional one committing every 1 000 and
every 100 messages, ROUNDS times each, each run on a fresh topic; with
--cluster the same against three Eddy nodes (cluster_fixture, topics of
replication factor 3, the coordinator on the controller leader); with
--kafka the same against Apache Kafka (kafka_fixture, one node, its
defaults) as the peer. Reported: best and median msg/s per mode, each mode
/ the same broker's idempotent rate, and the brokers' CPU time per message
(all three nodes' for the cluster).

Not run by ctest. Usage, from the build directory:
  EDDY_BIN=./eddy EDDY_SOURCE_DIR=.. /usr/bin/python3 ../tests/bench/txn_bench.py [--count 200000] [--rounds 3]
      [--cluster] [--kafka]
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


def run_modes(python, args, bootstrap, create_topic, cpu, prefix):
    """{mode: ([msg/s per round], [broker CPU us/msg per round])}."""
    modes = {"idempotent": 0, "txn/1000": 1000, "txn/100": 100}
    out = {m: ([], []) for m in modes}
    run = 0
    for _ in range(args.rounds):
        for mode, every in modes.items():
            run += 1
            topic = "%s-%d" % (prefix, run)
            create_topic(topic)
            c0 = cpu()
            r = subprocess.run([python, "-c", CLIENT, bootstrap, topic, str(args.count), str(every)],
                               capture_output=True, text=True, timeout=900)
            if r.returncode != 0:
                raise SystemExit("%s: exit %d\n%s" % (mode, r.returncode, r.stderr[-3000:]))
            result = json.loads(r.stdout.strip().splitlines()[-1])
            if result["errors"]:
                raise SystemExit("%s: delivery errors %r" % (mode, result["errors"]))
            out[mode][0].append(args.count / result["elapsed"])
            out[mode][1].append((cpu() - c0) / args.count * 1e6)
    return out


def report(name, results, base):
    for mode, (rates, cpu) in results.items():
        med = statistics.median(rates)
        print("| %s | %s | %.0f | %.0f | %.2f | %.2f |" % (name, mode, max(rates), med, med / base,
                                                           statistics.median(cpu)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=200000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cluster", action="store_true", help="the same against three Eddy nodes, RF=3")
    parser.add_argument("--kafka", action="store_true", help="the same against Apache Kafka (kafka_fixture)")
    args = parser.parse_args()
    python = nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python)
    broker = eddy_fixture.Broker(overrides={"log.retention.bytes": 64 << 20})
    try:
        broker.start()
        eddy = run_modes(python, args, broker.bootstrap, lambda t: nc.create_topic(broker, t, 3),
                         lambda: cpu_seconds(broker.proc.pid), "bench")
    finally:
        if broker.proc is not None:
            broker.stop()
    cluster_results = None
    if args.cluster:
        from cluster_fixture import EddyCluster
        from test_cluster_transactions import create_topic as create_replicated_topic, registered
        with EddyCluster(3) as c:
            c.start_all()
            c.wait_for_leader(timeout=30)
            eddy_fixture.wait_until(lambda: registered(c), 30, "three registered nodes")
            cluster_results = run_modes(python, args, c.bootstrap_of(c.ids), lambda t: create_replicated_topic(c, t),
                                        lambda: sum(cpu_seconds(n.proc.pid) for n in c.nodes.values()), "bench")
    kafka = None
    if args.kafka:
        import kafka_fixture
        with kafka_fixture.KafkaCluster(1) as cluster:
            kafka = run_modes(python, args, cluster.bootstrap, lambda t: cluster.create_topic(t, 3),
                              lambda: cpu_seconds(cluster.procs[1].pid), "bench")
    print("%d messages of 100 bytes, 3 partitions, acks=all, %d rounds" % (args.count, args.rounds))
    print("| broker | mode | best msg/s | median msg/s | median / its idempotent | broker CPU us/msg (median) |")
    print("|---|---|---|---|---|---|")
    report("eddy", eddy, statistics.median(eddy["idempotent"][0]))
    if cluster_results is not None:
        report("eddy, 3 nodes, RF=3", cluster_results, statistics.median(cluster_results["idempotent"][0]))
    if kafka is not None:
        report("kafka " + kafka_fixture.KAFKA_VERSION, kafka, statistics.median(kafka["idempotent"][0]))


if __name__ == "__main__":
    main()
