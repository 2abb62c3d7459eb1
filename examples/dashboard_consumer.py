#!/usr/bin/python3
"""A local consumer in the group "dashboard": run several copies and the
topic's partitions are shared among them; committed offsets survive restarts
of the consumer and of Eddy.

    examples/dashboard_consumer.py [BROKER] [MAX_MESSAGES]
"""
import sys

from kafka import KafkaConsumer

broker = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9092"
limit = int(sys.argv[2]) if len(sys.argv) > 2 else 0  # 0: forever

consumer = KafkaConsumer("sensors", bootstrap_servers=broker, group_id="dashboard",
                         auto_offset_reset="earliest", enable_auto_commit=True,
                         consumer_timeout_ms=10000 if limit else float("inf"))
seen = 0
for record in consumer:
    print("%s [%d@%d] %s" % (record.key.decode() if record.key else None, record.partition, record.offset,
                             record.value.decode()), flush=True)
    seen += 1
    if limit and seen >= limit:
        break
consumer.commit()
consumer.close()
