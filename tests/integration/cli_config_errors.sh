#!/usr/bin/env bash
# The eddy command line: bad configuration ends the process with exit code 2
# and a message naming file, line and key; good configuration starts and a
# signal stops it cleanly with exit code 0.
set -u
EDDY="${EDDY_BIN:?EDDY_BIN not set}"
SRC="${EDDY_SOURCE_DIR:?EDDY_SOURCE_DIR not set}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passes=0

check() {  # check NAME EXPECTED_RC EXPECTED_STDERR_SUBSTRING -- command...
  local name=$1 want_rc=$2 want_msg=$3
  shift 4
  local rc=0
  "$@" >"$work/out" 2>"$work/err" </dev/null || rc=$?
  if [ "$rc" != "$want_rc" ] || ! grep -qF -- "$want_msg" "$work/err" "$work/out"; then
    echo "FAIL $name: rc=$rc (want $want_rc), stderr: $(cat "$work/err")"
    failures=$((failures + 1))
  else
    echo "ok   $name"
    passes=$((passes + 1))
  fi
}

printf 'node.id=1\n\nno.such.key=1\n' >"$work/unknown.properties"
check "unknown key" 2 "$work/unknown.properties:3: no.such.key: unknown configuration key" -- \
  "$EDDY" serve "$work/unknown.properties"

printf '# c\nnum.partitions=many\n' >"$work/nan.properties"
check "non-numeric number" 2 "$work/nan.properties:2: num.partitions: expected an integer, got 'many'" -- \
  "$EDDY" serve "$work/nan.properties"

check "missing file" 2 "$work/missing.properties: cannot read" -- "$EDDY" serve "$work/missing.properties"
check "bad override" 2 "--override: log.segment.bytes: expected an integer" -- \
  "$EDDY" serve "$SRC/config/gateway.properties" --override log.segment.bytes=big
check "metrics listener without a port" 2 "eddy.metrics.listener=http://127.0.0.1 (--override): expected http://HOST:PORT" -- \
  "$EDDY" serve --override "log.dirs=$work/m" --override eddy.metrics.listener=http://127.0.0.1
check "bad eddy.request.read.timeout.ms" 2 "eddy.request.read.timeout.ms" -- \
  "$EDDY" serve --override "log.dirs=$work/m" --override eddy.request.read.timeout.ms=soon
check "forward link CA bundle missing" 2 "eddy.forward.dc.ssl.truststore.location $work/no-ca.pem: cannot open" -- \
  "$EDDY" serve --override "log.dirs=$work/m" --override eddy.forward.links=dc \
  --override eddy.forward.dc.bootstrap.servers=localhost:9094 --override eddy.forward.dc.security.protocol=SSL \
  --override "eddy.forward.dc.ssl.truststore.location=$work/no-ca.pem"
check "forward link password file missing" 2 "eddy.forward.dc.sasl.password.file $work/no.password: cannot open" -- \
  "$EDDY" serve --override "log.dirs=$work/m" --override eddy.forward.links=dc \
  --override eddy.forward.dc.bootstrap.servers=localhost:9094 --override eddy.forward.dc.security.protocol=SASL_PLAINTEXT \
  --override eddy.forward.dc.sasl.username=gw --override "eddy.forward.dc.sasl.password.file=$work/no.password"
check "unknown option" 2 "unknown option '--bogus'" -- "$EDDY" serve --bogus
check "unknown command" 2 "unknown command 'srve'" -- "$EDDY" srve
check "version" 0 "eddy " -- "$EDDY" --version
check "config reference" 0 "log.segment.bytes" -- "$EDDY" help config

# A cluster node's quorum configuration (src/app/quorum_config.cc), on the
# shipped node-1 config: each refusal names the key and why, before the
# data directory is touched. (A CONTROLLER listener without voters:
# tests/integration/test_cluster_quorum.py.)
node1="$SRC/config/cluster-node1.properties"
quorum_check() {  # quorum_check NAME EXPECTED_STDERR_SUBSTRING override...
  local name=$1 want_msg=$2
  shift 2
  local data="$work/quorum-$passes-$failures" args=()
  for o in "$@"; do args+=(--override "$o"); done
  check "quorum: $name" 2 "$want_msg" -- "$EDDY" serve "$node1" --override "log.dirs=$data" "${args[@]}"
  if [ -e "$data" ]; then
    echo "FAIL quorum: $name: the refused start created $data"
    failures=$((failures + 1))
  fi
}
voters_line=$(grep -n '^controller.quorum.voters=' "$node1" | cut -d: -f1)
quorum_check "node.id not a voter" "$node1:$voters_line: controller.quorum.voters: node.id 4 is not one of the voters" \
  node.id=4
quorum_check "controller listener not PLAINTEXT" \
  "listener.security.protocol.map: the controller listener CONTROLLER must be PLAINTEXT" \
  listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_PLAINTEXT
quorum_check "controller port not the voter's" \
  "controller.quorum.voters: node 1's address 127.0.0.1:9093 does not name the port of its controller listener (9193)" \
  listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9193
quorum_check "controller listener missing" \
  "listeners: the controller listener CONTROLLER (controller.listener.names) is not among the listeners" \
  listeners=PLAINTEXT://127.0.0.1:9092
quorum_check "no client listener" "listeners: a listener for clients is needed besides CONTROLLER" \
  listeners=CONTROLLER://127.0.0.1:9093
quorum_check "voter without a port" "controller.quorum.voters: '1@127.0.0.1': '127.0.0.1': expected host:port" \
  controller.quorum.voters=1@127.0.0.1

# Both shipped configs load; SIGTERM stops the broker with exit code 0 and the
# data directory is created and locked against a second process.
for cfg in gateway server; do
  data="$work/data-$cfg"
  "$EDDY" serve "$SRC/config/$cfg.properties" --override "log.dirs=$data" \
    --override "listeners=PLAINTEXT://127.0.0.1:0" 2>"$work/serve.err" &
  pid=$!
  for _ in $(seq 100); do [ -e "$data/.lock" ] && break; sleep 0.05; done
  check "$cfg: second process refused" 1 "in use by another eddy process" -- \
    "$EDDY" serve "$SRC/config/$cfg.properties" --override "log.dirs=$data"
  kill -TERM "$pid"
  rc=0
  wait "$pid" || rc=$?
  if [ "$rc" = 0 ]; then echo "ok   $cfg: clean stop"; passes=$((passes + 1)); else
    echo "FAIL $cfg: exit $rc after SIGTERM: $(cat "$work/serve.err")"; failures=$((failures + 1)); fi
done

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
