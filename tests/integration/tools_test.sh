#!/usr/bin/env bash
# The client tools (eddy topics / produce / consume) against a real eddy
# broker, cross-checked with kcat: topic administration, records written by
# one side and read by the other (keys, headers, partitions, offsets;
# compression also with kafka-python), and the error cases (bad flags: exit 2; unknown topic,
# unreachable broker: exit 1, promptly).
set -u
EDDY="${EDDY_BIN:?EDDY_BIN not set}"
SRC="${EDDY_SOURCE_DIR:?EDDY_SOURCE_DIR not set}"
command -v kcat >/dev/null || { echo "kcat not installed"; exit 1; }
work=$(mktemp -d)
broker_pid=""
cleanup() {
  [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null && wait "$broker_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
passes=0

pass() { echo "ok   $1"; passes=$((passes + 1)); }
fail() { echo "FAIL $1"; failures=$((failures + 1)); }

# run NAME EXPECTED_RC -- command...   (stdout in $work/out, stderr in $work/err)
run() {
  local name=$1 want_rc=$2
  shift 3
  local rc=0
  timeout 60 "$@" >"$work/out" 2>"$work/err" </dev/null || rc=$?
  if [ "$rc" != "$want_rc" ]; then
    fail "$name: rc=$rc (want $want_rc); stderr: $(head -c 400 "$work/err")"
    return 1
  fi
  return 0
}
# expect NAME FILE FIXED_STRING: FILE contains the string.
expect() {
  if grep -qF -- "$3" "$2"; then pass "$1"; else fail "$1: '$3' not in $(basename "$2"): $(head -c 400 "$2")"; fi
}
same() {  # same NAME FILE_A FILE_B
  if cmp -s "$2" "$3"; then pass "$1"; else fail "$1: differ:"; diff "$2" "$3" | head -10; fi
}

start_broker() {
  : >"$work/serve.err"
  "$EDDY" serve "$SRC/config/gateway.properties" --override "log.dirs=$work/data" \
    --override "listeners=PLAINTEXT://127.0.0.1:0" --override "auto.create.topics.enable=false" \
    2>"$work/serve.err" &
  broker_pid=$!
  B=""
  for _ in $(seq 200); do
    B=$(grep -o 'listening on PLAINTEXT://[0-9.]*:[0-9]*' "$work/serve.err" | head -1 | sed 's|.*//||')
    [ -n "$B" ] && break
    sleep 0.05
  done
  [ -n "$B" ] || { echo "broker did not start: $(cat "$work/serve.err")"; exit 1; }
}
start_broker
T="$EDDY topics --bootstrap-server $B"

# --- topics -----------------------------------------------------------------
run "create" 0 -- $T --create --topic orders --partitions 3 --config retention.ms=3600000 &&
  expect "create prints" "$work/out" "Created topic orders."
run "create again" 1 -- $T --create --topic orders && expect "create again says why" "$work/err" "TOPIC_ALREADY_EXISTS"
run "create --if-not-exists" 0 -- $T --create --topic orders --if-not-exists && pass "create --if-not-exists"
run "create default partitions" 0 -- $T --create --topic plain && pass "create with defaults"
run "create invalid name" 1 -- $T --create --topic 'bad/name' && expect "invalid name" "$work/err" "INVALID_TOPIC_EXCEPTION"
run "list" 0 -- $T --list && printf 'orders\nplain\n' >"$work/want" && same "list" "$work/out" "$work/want"

run "describe" 0 -- $T --describe --topic orders
head -1 "$work/out" | grep -qE $'^Topic: orders\tTopicId: [A-Za-z0-9_-]{22}\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: retention.ms=3600000$' &&
  pass "describe header" || fail "describe header: $(head -1 "$work/out")"
for p in 0 1 2; do
  expect "describe partition $p" "$work/out" $'\tTopic: orders\tPartition: '"$p"$'\tLeader: 1\tReplicas: 1\tIsr: 1'
done
run "describe all" 0 -- $T --describe && expect "describe all lists plain" "$work/out" $'Topic: plain\t'

run "alter partitions" 0 -- $T --alter --topic orders --partitions 4 &&
  run "describe after alter" 0 -- $T --describe --topic orders && expect "4 partitions" "$work/out" "PartitionCount: 4"
run "shrink partitions" 1 -- $T --alter --topic orders --partitions 2 && expect "shrink refused" "$work/err" "INVALID_PARTITIONS"
run "add config" 0 -- $T --alter --topic orders --add-config retention.bytes=1048576,max.message.bytes=65536 &&
  run "describe configs" 0 -- $T --describe --topic orders &&
  expect "configs set" "$work/out" "max.message.bytes=65536" && expect "configs kept" "$work/out" "retention.ms=3600000"
run "delete config" 0 -- $T --alter --topic orders --delete-config retention.ms &&
  run "describe after delete-config" 0 -- $T --describe --topic orders &&
  if grep -q "retention.ms" "$work/out"; then fail "delete-config: $(head -1 "$work/out")"; else pass "delete-config"; fi
run "unknown config" 1 -- $T --alter --topic orders --add-config no.such.config=1 &&
  expect "unknown config named" "$work/err" "no.such.config"

# --- produce and consume ----------------------------------------------------
P="$EDDY produce --bootstrap-server $B"
C="$EDDY consume --bootstrap-server $B"
for i in $(seq 1 200); do echo "key$((i % 17)):value-$i"; done >"$work/keyed.txt"
run "produce keyed" 0 -- bash -c "$P --topic orders --property parse.key=true --property key.separator=: <'$work/keyed.txt'" &&
  pass "produce keyed"
run "consume keyed" 0 -- $C --topic orders --from-beginning --max-messages 200 --timeout-ms 10000 \
  --property print.key=true --property print.partition=true --property print.offset=true --property key.separator=,
expect "consume reports count" "$work/err" "Processed a total of 200 messages"
# Every key on one partition, offsets 0.. without gaps per partition, values in order.
if awk -F, '{ split($1,a,":"); split($2,b,":"); p=a[2]; o=b[2];
              if (o != next_off[p]+0) bad=1; next_off[p]=o+1;
              if ($3 in part && part[$3] != p) bad=1; part[$3]=p }
            END { exit bad }' "$work/out"; then pass "partitions and offsets consistent"; else
  fail "partitions/offsets: $(head -5 "$work/out")"; fi
# The same keys through kcat with Kafka's partitioner land on the same partitions.
run "create orders2" 0 -- $T --create --topic orders2 --partitions 4
kcat -b "$B" -P -t orders2 -K: -X partitioner=murmur2_random <"$work/keyed.txt" 2>"$work/kcat.err"
run "consume orders2" 0 -- $C --topic orders2 --from-beginning --max-messages 200 --timeout-ms 10000 \
  --property print.key=true --property print.partition=true --property key.separator=,
awk -F, '{print $2 "," $1}' "$work/out" | sort -u >"$work/kcat-parts"
run "consume orders again" 0 -- $C --topic orders --from-beginning --max-messages 200 --timeout-ms 10000 \
  --property print.key=true --property print.partition=true --property key.separator=,
awk -F, '{print $2 "," $1}' "$work/out" | sort -u >"$work/eddy-parts"
same "murmur2 partitioning matches kcat" "$work/eddy-parts" "$work/kcat-parts"

# eddy produce -> kcat consume
run "create xfer" 0 -- $T --create --topic xfer --partitions 1
printf 'a\tone\nb\ttwo\n\tempty-key\nc\t\n' >"$work/tabbed.txt"
run "produce tab keys" 0 -- bash -c "$P --topic xfer --property parse.key=true --acks 1 <'$work/tabbed.txt'"
kcat -b "$B" -C -t xfer -e -q -f '%k|%s|%o\n' >"$work/out" 2>"$work/err"
printf 'a|one|0\nb|two|1\n|empty-key|2\nc||3\n' >"$work/want"
same "eddy produce -> kcat" "$work/out" "$work/want"

# kcat produce (keys, headers) -> eddy consume
printf 'k1:v1\nk2:v2\n' | kcat -b "$B" -P -t xfer -K: -H trace=abc 2>"$work/kcat.err"
run "consume kcat records" 0 -- $C --topic xfer --partition 0 --offset 4 --max-messages 2 --timeout-ms 10000 \
  --property print.key=true --property print.headers=true --property print.offset=true --property print.timestamp=true
grep -qE $'^CreateTime:[0-9]{13}\tOffset:4\ttrace:abc\tk1\tv1$' "$work/out" &&
  grep -qE $'^CreateTime:[0-9]{13}\tOffset:5\ttrace:abc\tk2\tv2$' "$work/out" && pass "kcat -> eddy consume" ||
  fail "kcat -> eddy consume: $(cat "$work/out")"
run "consume --offset latest" 0 -- $C --topic xfer --partition 0 --offset latest --timeout-ms 300 &&
  expect "latest reads nothing old" "$work/err" "Processed a total of 0 messages"
run "consume timeout" 0 -- $C --topic xfer --from-beginning --timeout-ms 1000 &&
  expect "timeout ends with all records" "$work/err" "Processed a total of 6 messages"

# Compression both ways, when this eddy has the codec (else a clear refusal).
# Other client -> eddy uses kafka-python, which always compresses (librdkafka
# sends lz4 uncompressed to a broker without FindCoordinator) and frames
# snappy the xerial way, as Kafka's Java client does.
PY=/usr/bin/python3
py_produce() {  # py_produce TOPIC CODEC < lines
  "$PY" -c '
import sys
from kafka import KafkaProducer
p = KafkaProducer(bootstrap_servers=sys.argv[1], compression_type=sys.argv[3], linger_ms=50, api_version=(2, 5, 0))
for line in sys.stdin.read().splitlines():
    p.send(sys.argv[2], value=line.encode())
p.flush()
p.close()
' "$B" "$1" "$2"
}
for codec in gzip snappy lz4 zstd; do
  run "create z$codec" 0 -- $T --create --topic "z$codec" --partitions 1
  seq 1 500 | sed "s/^/$codec-/" >"$work/lines"
  rc=0
  timeout 60 $P --topic "z$codec" --compression "$codec" <"$work/lines" >"$work/out" 2>"$work/err" || rc=$?
  if [ "$rc" = 2 ] && grep -q "built without" "$work/err"; then
    # This eddy lacks the codec: reading such a batch fails and names it.
    py_produce "z$codec" "$codec" <"$work/lines" 2>"$work/py.err" || fail "kafka-python $codec: $(tail -3 "$work/py.err")"
    run "consume $codec without codec" 1 -- $C --topic "z$codec" --from-beginning --timeout-ms 5000 &&
      expect "missing $codec named" "$work/err" "compression codec $codec is not built into this eddy"
    continue
  fi
  [ "$rc" = 0 ] || fail "produce --compression $codec: rc=$rc $(cat "$work/err")"
  kcat -b "$B" -C -t "z$codec" -e -q >"$work/out" 2>"$work/err"
  same "eddy $codec -> kcat" "$work/out" "$work/lines"
  py_produce "z$codec" "$codec" <"$work/lines" 2>"$work/py.err" || fail "kafka-python $codec: $(tail -3 "$work/py.err")"
  run "consume $codec" 0 -- $C --topic "z$codec" --partition 0 --offset 500 --max-messages 500 --timeout-ms 10000
  same "kafka-python $codec -> eddy" "$work/out" "$work/lines"
done

# acks=0: nothing to wait for, the records still arrive.
run "create acks0" 0 -- $T --create --topic acks0 --partitions 2
run "produce acks=0" 0 -- bash -c "seq 1 100 | $P --topic acks0 --acks 0"
run "consume acks=0" 0 -- $C --topic acks0 --from-beginning --max-messages 100 --timeout-ms 10000
[ "$(sort -n "$work/out")" = "$(seq 1 100)" ] && pass "acks=0 records arrive" || fail "acks=0: $(wc -l <"$work/out") records"

# A partial batch goes out after --linger-ms while input stays open.
mkfifo "$work/fifo"
$P --topic xfer --linger-ms 50 <"$work/fifo" 2>"$work/linger.err" &
linger_pid=$!
exec 3>"$work/fifo"
echo "lingered" >&3
seen=no
for _ in $(seq 50); do
  $C --topic xfer --partition 0 --offset 6 --max-messages 1 --timeout-ms 200 >"$work/out" 2>/dev/null
  grep -q lingered "$work/out" && { seen=yes; break; }
done
exec 3>&-
wait "$linger_pid"
linger_rc=$?
[ "$seen" = yes ] && [ "$linger_rc" = 0 ] && pass "linger sends before end of input" ||
  fail "linger: seen=$seen rc=$linger_rc $(cat "$work/linger.err")"

# --- errors -----------------------------------------------------------------
run "unknown flag" 2 -- $T --list --bogus && expect "unknown flag named" "$work/err" "unknown option '--bogus'"
run "no bootstrap" 2 -- "$EDDY" topics --list && expect "bootstrap required" "$work/err" "--bootstrap-server is required"
run "two actions" 2 -- $T --list --describe && expect "one action" "$work/err" "exactly one of"
run "produce no topic" 2 -- $P && expect "produce topic required" "$work/err" "--topic is required"
run "consume no topic" 2 -- $C && expect "consume topic required" "$work/err" "--topic is required"
run "bad acks" 2 -- $P --topic xfer --acks 2 && expect "bad acks named" "$work/err" "--acks"
run "bad codec" 2 -- $P --topic xfer --compression brotli && expect "bad codec named" "$work/err" "brotli"
run "offset needs partition" 2 -- $C --topic xfer --offset 3 && expect "offset needs partition" "$work/err" "--partition"
run "bad property" 2 -- $C --topic xfer --property print.key=maybe && expect "bad property" "$work/err" "print.key"
run "bad address" 2 -- "$EDDY" consume --bootstrap-server localhost --topic x && expect "bad address" "$work/err" "host:port"
run "consume unknown topic" 1 -- $C --topic nope && expect "consume unknown topic" "$work/err" "topic 'nope' does not exist"
run "produce unknown topic" 1 -- $P --topic nope && expect "produce unknown topic" "$work/err" "topic 'nope' does not exist"
run "describe unknown topic" 1 -- $T --describe --topic nope && expect "describe unknown" "$work/err" "does not exist"
run "delete unknown --if-exists" 0 -- $T --delete --topic nope --if-exists && pass "delete --if-exists"
run "produce bad partition" 1 -- $P --topic xfer --partition 5 && expect "bad partition" "$work/err" "has no partition 5"
run "bad key line" 1 -- bash -c "printf 'nokey\n' | $P --topic xfer --property parse.key=true" &&
  expect "bad key line" "$work/err" "no key separator"
run "unresolvable host" 1 -- "$EDDY" topics --bootstrap-server no-such-host.invalid:9092 --list &&
  expect "unresolvable host" "$work/err" "no-such-host.invalid"

run "delete" 0 -- $T --delete --topic plain && expect "delete prints" "$work/out" "Deleted topic plain." &&
  run "list after delete" 0 -- $T --list && if grep -qx plain "$work/out"; then fail "plain still listed"; else pass "deleted"; fi

# A consumer whose broker goes away gives up after --request-timeout-ms.
# Once it has printed the existing records it is connected and polling.
$C --topic xfer --from-beginning --request-timeout-ms 1500 >"$work/lost.out" 2>"$work/lost.err" &
consumer_pid=$!
for _ in $(seq 200); do [ -s "$work/lost.out" ] && break; sleep 0.05; done
kill "$broker_pid"; wait "$broker_pid" 2>/dev/null; broker_pid=""
start=$(date +%s)
rc=0; wait "$consumer_pid" || rc=$?
elapsed=$(( $(date +%s) - start ))
[ "$rc" = 1 ] && [ "$elapsed" -le 10 ] && grep -q "giving up" "$work/lost.err" && pass "consumer gives up on a lost broker" ||
  fail "lost broker: rc=$rc after ${elapsed}s: $(cat "$work/lost.err")"

run "broker down" 1 -- $T --list && expect "broker down says why" "$work/err" "cannot connect"
run "produce broker down" 1 -- $P --topic xfer && pass "produce broker down"

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
