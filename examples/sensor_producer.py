#!/usr/bin/python3
"""A sensor on the gateway: one reading per second to the topic "sensors",
keyed by sensor id, acks=all (acknowledged = on the gateway's disk).
Unchanged kafka-python code: point bootstrap_servers at Eddy.

    examples/sensor_producer.py [BROKER] [SENSOR_ID] [COUNT]
"""
import json
import random
import sys
import time

from kafka import KafkaProducer

broker = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9092"
sensor = sys.argv[2] if len(sys.argv) > 2 else "boiler-1"
count = int(sys.argv[3]) if len(sys.argv) > 3 else 0  # 0: forever

producer = KafkaProducer(bootstrap_servers=broker, acks="all", compression_type="gzip",
                         key_serializer=str.encode, value_serializer=lambda v: json.dumps(v).encode())
sent = 0
while count == 0 or sent < count:
    reading = {"sensor": sensor, "celsius": round(60 + random.random() * 10, 1), "ts": time.time()}
    metadata = producer.send("sensors", key=sensor, value=reading).get(timeout=30)
    print("partition %d offset %d: %s" % (metadata.partition, metadata.offset, reading), flush=True)
    sent += 1
    if count == 0 or sent < count:
        time.sleep(1)
producer.flush()
