#!/usr/bin/env bash
# A three-node Eddy cluster on one machine (config/cluster-node{1,2,3}.properties:
# clients on 127.0.0.1:9092/10092/11092, Raft between the nodes on
# 9093/10093/11093). It starts the three, shows which one leads the
# controller quorum, creates a topic through node 2 and describes it through
# node 3 (one cluster: its six partitions spread over the three nodes), kills
# the leader, shows the new one, restarts the old leader and shows it
# catching up again.
#   examples/cluster_demo.sh [EDDY_BINARY]
# With Kafka's tools installed, look at the quorum as in Kafka:
#   kafka-metadata-quorum.sh --bootstrap-controller 127.0.0.1:9093 describe --replication
# The cluster shares its metadata (topics, placement, configs, group offsets)
# through the controller quorum; partitions themselves are not replicated
# yet: each lives on one node (see src/raft/README.md).
set -eu
eddy="${1:-build/eddy}"
here="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

start() {  # start NODE [extra overrides...]
  local i="$1"; shift
  "$eddy" serve "$here/config/cluster-node$i.properties" --override "log.dirs=$work/node$i" "$@" \
    2>>"$work/node$i.log" &
  eval "pid$i=$!"
}

# The leader, from the nodes' logs: the last "leader of epoch" line of all.
leader() {
  grep -h "leader of epoch" "$work"/node*.log 2>/dev/null | sort | tail -1 | sed -E 's/.*raft ([0-9]+): leader of epoch ([0-9]+).*/\1 \2/'
}

wait_for_new_leader() {  # wait_for_new_leader OLD_EPOCH
  for _ in $(seq 1 100); do
    set -- "$1" $(leader)
    if [ -n "${3:-}" ] && [ "$3" -gt "$1" ]; then echo "$2 $3"; return; fi
    sleep 0.1
  done
  echo "no new leader within 10 s" >&2; exit 1
}

# First start of a new cluster: eddy.quorum.bootstrap=true, once.
for i in 1 2 3; do start "$i" --override eddy.quorum.bootstrap=true; done
read -r node epoch < <(wait_for_new_leader 0)
echo "node $node leads the controller quorum (epoch $epoch)"

sleep 1  # the nodes register their endpoints with the leader (a topic is placed on registered nodes)
for _ in $(seq 1 50); do
  "$eddy" topics --bootstrap-server 127.0.0.1:10092 --create --topic demo --partitions 6 --if-not-exists \
    >/dev/null 2>&1 && break
  sleep 0.2
done
echo "created topic demo through node 2; node 3 describes it:"
sleep 1
"$eddy" topics --bootstrap-server 127.0.0.1:11092 --describe --topic demo

t0=$(date +%s.%N)
kill -9 "$(eval echo "\$pid$node")"
echo "killed node $node (SIGKILL)"
read -r new new_epoch < <(wait_for_new_leader "$epoch")
echo "node $new leads (epoch $new_epoch) after $(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $t0 }") s"

start "$node"  # with its data: it rejoins as a follower
sleep 2
echo "node $node restarted: $(grep -h "raft $node: open" "$work/node$node.log" | tail -1 | sed 's/.*raft/raft/')"
echo "logs: $work/node*.log (removed on exit); Ctrl-C to stop"
wait
