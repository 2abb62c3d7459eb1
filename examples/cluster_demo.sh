#!/usr/bin/env bash
# A three-node Eddy cluster on one machine (config/cluster-node{1,2,3}.properties:
# clients on 127.0.0.1:9092/10092/11092, Raft between the nodes on
# 9093/10093/11093). It starts the three, shows which one leads the
# controller quorum, creates a topic replicated on all three nodes through
# node 2 and describes it through node 3, writes 100 records with acks=all,
# kills the node that leads the topic's partition, writes 100 more (the
# producer follows the new leader), reads all 200 back through another node,
# then restarts the killed node, which catches up as a follower.
#   examples/cluster_demo.sh [EDDY_BINARY]
# With Kafka's tools installed, look at the quorum as in Kafka:
#   kafka-metadata-quorum.sh --bootstrap-controller 127.0.0.1:9093 describe --replication
# The cluster shares its metadata (topics, placement, configs, group offsets)
# through the controller quorum, and each partition of a topic with
# replication factor 3 is a Raft group of its own (see src/raft/README.md).
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

# The controller quorum's leader, from the nodes' logs: the last "raft <node>: leader
# of epoch" line of all (partition groups name their partition instead).
leader() {
  grep -hE "raft [0-9]+: leader of epoch" "$work"/node*.log 2>/dev/null | sort | tail -1 | sed -E 's/.*raft ([0-9]+): leader of epoch ([0-9]+).*/\1 \2/'
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
  "$eddy" topics --bootstrap-server 127.0.0.1:10092 --create --topic demo --partitions 1 --replication-factor 3 \
    --if-not-exists >/dev/null 2>&1 && break
  sleep 0.2
done
all="127.0.0.1:9092,127.0.0.1:10092,127.0.0.1:11092"
# The partition's leader, as Metadata names it (eddy topics --describe);
# empty while its replicas elect one.
partition_leader() {
  "$eddy" topics --bootstrap-server "$1" --describe --topic demo 2>/dev/null | sed -nE 's/.*Leader: ([0-9]+).*/\1/p' | head -1
}
for _ in $(seq 1 100); do
  [ -n "$(partition_leader 127.0.0.1:11092)" ] && break
  sleep 0.1
done
echo "created topic demo (1 partition, 3 replicas) through node 2; node 3 describes it:"
"$eddy" topics --bootstrap-server 127.0.0.1:11092 --describe --topic demo
seq 1 100 | sed 's/^/before-/' | "$eddy" produce --bootstrap-server "$all" --topic demo --acks all
echo "wrote 100 records with acks=all"

part_leader=$(partition_leader "$all")
t0=$(date +%s.%N)
kill -9 "$(eval echo "\$pid$part_leader")"
echo "killed node $part_leader, the partition's leader (SIGKILL)"
seq 1 100 | sed 's/^/after-/' | "$eddy" produce --bootstrap-server "$all" --topic demo --acks all \
  --message-send-max-retries 100
echo "wrote 100 more with acks=all, $(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $t0 }") s after the kill"
survivor=$(( part_leader % 3 + 1 ))
got=$("$eddy" consume --bootstrap-server "127.0.0.1:$(( 9092 + (survivor - 1) * 1000 ))" --topic demo \
  --from-beginning --max-messages 200 --timeout-ms 10000 | wc -l)
echo "read $got records back through node $survivor"
"$eddy" topics --bootstrap-server "127.0.0.1:$(( 9092 + (survivor - 1) * 1000 ))" --describe --topic demo

start "$part_leader"  # with its data: it rejoins as a follower and catches up
sleep 2
echo "node $part_leader restarted: $(grep -h "raft $part_leader: open" "$work/node$part_leader.log" | tail -1 | sed 's/.*raft/raft/')"
echo "logs: $work/node*.log (removed on exit); Ctrl-C to stop"
wait
