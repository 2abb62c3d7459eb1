#!/usr/bin/env bash
# Sends one reading per second from a (simulated) temperature sensor to the
# topic "sensors" with kcat, keyed by sensor id, as any Kafka producer would.
#   examples/produce_lines.sh [BROKER] [SENSOR_ID]
set -eu
broker="${1:-127.0.0.1:9092}"
sensor="${2:-boiler-1}"
while true; do
  printf '%s:{"sensor":"%s","celsius":%d.%d,"ts":%s}\n' "$sensor" "$sensor" $((60 + RANDOM % 10)) $((RANDOM % 10)) "$(date +%s)"
  sleep 1
done | kcat -P -b "$broker" -t sensors -K: -z lz4
