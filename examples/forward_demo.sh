#!/usr/bin/env bash
# Store-and-forward on one machine: a "central" eddy on 127.0.0.1:19092
# stands in for the data centre (it speaks the Kafka protocol), a gateway
# eddy on 127.0.0.1:9092 forwards sensors.* to it with the settings of
# examples/forwarding-gateway.properties. Cut the "uplink" by stopping the
# central broker (Ctrl-Z / kill -STOP) and watch the backlog grow, then let
# it drain.
#   examples/forward_demo.sh [EDDY_BINARY]
set -eu
eddy="${1:-build/eddy}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

"$eddy" serve --override listeners=PLAINTEXT://127.0.0.1:19092 --override "log.dirs=$work/central" \
  --override auto.create.topics.enable=false 2>"$work/central.log" &
sleep 0.5
for t in sensors.temp sensors.alarms; do
  "$eddy" topics --bootstrap-server 127.0.0.1:19092 --create --topic "plant.gateway-17.$t" --partitions 3
done

"$eddy" serve "$here/forwarding-gateway.properties" \
  --override listeners=PLAINTEXT://127.0.0.1:9092 --override advertised.listeners= \
  --override "log.dirs=$work/gateway" \
  --override eddy.forward.dc.bootstrap.servers=127.0.0.1:19092 2>"$work/gateway.log" &
sleep 0.5

# A sensor: one reading every 100 ms.
( i=0; while true; do echo "boiler-1:{\"celsius\":$((60 + RANDOM % 10)),\"n\":$i}"; i=$((i+1)); sleep 0.1; done |
  "$eddy" produce --bootstrap-server 127.0.0.1:9092 --topic sensors.temp --property parse.key=true \
    --property key.separator=: >/dev/null 2>&1 ) &

echo "central: $work/central.log, gateway: $work/gateway.log; Ctrl-C ends the demo"
"$eddy" forward status --data-dir "$work/gateway" --watch 2
