"""SASL authentication (SASL_PLAINTEXT) on one eddy with two listeners:
PLAINTEXT on 127.0.0.1 (credentials are managed through it) and
SASL_PLAINTEXT. In file order:
  1. credentials made with `eddy users` (SCRAM-SHA-512, SCRAM-SHA-256) and
     with Kafka's own kafka-configs (AlterUserScramCredentials, iterations
     8192), listed by both tools;
  2. produce + consume through the SASL listener with kcat (Debian's
     librdkafka 2.0.2: SaslHandshake v1 + SaslAuthenticate), kafka-python
     (Debian's 2.0.2: SaslHandshake v0, raw tokens) and confluent-kafka
     (PyPI, newest librdkafka), with PLAIN, SCRAM-SHA-512 and SCRAM-SHA-256;
  3. a wrong password and an unknown user are refused with an
     authentication error, one log line each, other connections unaffected;
  4. a Produce before authentication, and a client without SASL, are
     closed; SaslHandshake on the PLAINTEXT listener is ILLEGAL_SASL_STATE;
  5. the credentials survive a restart;
  6. re-authentication (connections.max.reauth.ms, KIP-368) on raw
     connections and with the newest librdkafka.
Run alone: EDDY_BIN=build/eddy EDDY_SOURCE_DIR=. /usr/bin/python3 -m pytest
tests/integration/test_sasl.py"""

import os
import re
import socket
import struct
import subprocess

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError

import eddy_fixture
import kafka_fixture
import newest_clients as nc

SASL_LISTENING = re.compile(r"listening on SASL_PLAINTEXT://127\.0\.0\.1:(\d+)")
CONFIGS = "org.apache.kafka.tools.ConfigCommand"
USERS = {"alice": "alice-Secret,=1", "bob": "bob-secret-2", "carol": "carol-secret-3"}


@pytest.fixture(scope="module")
def eddy_overrides():
    return {"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"}


def sasl_port(eddy):
    m = SASL_LISTENING.findall(eddy.log_text())
    assert m, "eddy logs its SASL_PLAINTEXT port:\n" + eddy.log_text()[-2000:]
    return int(m[-1])


def sasl_bootstrap(eddy):
    return "127.0.0.1:%d" % sasl_port(eddy)


def eddy_users(eddy, *args, password=None):
    return subprocess.run([eddy.bin, "users", "--bootstrap-server", eddy.bootstrap] + list(args),
                          input=(password + "\n").encode() if password else None,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)


def kafka_configs(eddy, *args):
    proc = kafka_fixture.java_tool(CONFIGS, ["--bootstrap-server", eddy.bootstrap] + list(args))
    assert proc.returncode == 0, "kafka-configs %s: %s" % (" ".join(args), proc.stderr.decode()[-3000:])
    return proc.stdout.decode()


def kcat(eddy, mechanism, user, password, args, input_bytes=None):
    cmd = ["kcat", "-b", sasl_bootstrap(eddy), "-X", "security.protocol=sasl_plaintext",
           "-X", "sasl.mechanisms=" + mechanism, "-X", "sasl.username=" + user,
           "-X", "sasl.password=" + password] + args
    return subprocess.run(cmd, input=input_bytes, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)


def frame(api_key, version, correlation, body, client_id=b"test-sasl"):
    header = struct.pack(">hhih", api_key, version, correlation, len(client_id)) + client_id
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


def read_frame(sock):
    data = b""
    while len(data) < 4:
        chunk = sock.recv(4 - len(data))
        if not chunk:
            return None
        data += chunk
    (size,) = struct.unpack(">i", data)
    body = b""
    while len(body) < size:
        chunk = sock.recv(size - len(body))
        if not chunk:
            return None
        body += chunk
    return body


def closed_by_peer(sock):
    sock.settimeout(10)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def test_users_from_eddy_users_and_kafka_configs(eddy):
    r = eddy_users(eddy, "--add", "alice", "--mechanism", "SCRAM-SHA-512", password=USERS["alice"])
    assert r.returncode == 0, r.stderr.decode()
    r = eddy_users(eddy, "--add", "bob", "--mechanism", "SCRAM-SHA-256", "--iterations", "8192",
                   password=USERS["bob"])
    assert r.returncode == 0, r.stderr.decode()
    assert eddy_users(eddy, "--add", "x", "--iterations", "100", password="p").returncode != 0
    kafka_configs(eddy, "--alter", "--add-config", "SCRAM-SHA-512=[iterations=8192,password=%s]" % USERS["carol"],
                  "--entity-type", "users", "--entity-name", "carol")
    listed = eddy_users(eddy, "--list").stdout.decode()
    assert listed.splitlines() == ["alice SCRAM-SHA-512 iterations=4096", "bob SCRAM-SHA-256 iterations=8192",
                                   "carol SCRAM-SHA-512 iterations=8192"], listed
    described = kafka_configs(eddy, "--describe", "--entity-type", "users")
    for line in ["user-principal 'alice' are SCRAM-SHA-512=iterations=4096",
                 "user-principal 'bob' are SCRAM-SHA-256=iterations=8192",
                 "user-principal 'carol' are SCRAM-SHA-512=iterations=8192"]:
        assert line in described, described
    # A credential made and deleted again.
    kafka_configs(eddy, "--alter", "--add-config", "SCRAM-SHA-256=[password=tmp-pw]", "--entity-type", "users",
                  "--entity-name", "dave")
    r = eddy_users(eddy, "--delete", "dave")
    assert r.returncode == 0 and "Deleted SCRAM-SHA-256" in r.stdout.decode(), r.stderr.decode()
    assert "dave" not in eddy_users(eddy, "--list").stdout.decode()


@pytest.mark.parametrize("mechanism,user", [("SCRAM-SHA-512", "alice"), ("PLAIN", "carol"),
                                            ("SCRAM-SHA-256", "bob")])
def test_kcat_roundtrip(eddy, mechanism, user):
    topic = "sasl-kcat-" + mechanism.lower()
    p = kcat(eddy, mechanism, user, USERS[user], ["-P", "-t", topic], input_bytes=b"one\ntwo\n")
    assert p.returncode == 0, p.stderr.decode()
    c = kcat(eddy, mechanism, user, USERS[user], ["-C", "-t", topic, "-o", "beginning", "-e", "-q"])
    assert c.returncode == 0 and c.stdout.decode().split() == ["one", "two"], c.stderr.decode()
    assert "authenticated as User:%s with %s" % (user, mechanism) in eddy.log_text()


@pytest.mark.parametrize("mechanism,user", [("PLAIN", "alice"), ("SCRAM-SHA-512", "carol"),
                                            ("SCRAM-SHA-256", "bob")])
def test_kafka_python_roundtrip(eddy, mechanism, user):
    topic = "sasl-py-" + mechanism.lower()
    conf = dict(bootstrap_servers=sasl_bootstrap(eddy), security_protocol="SASL_PLAINTEXT",
                sasl_mechanism=mechanism, sasl_plain_username=user, sasl_plain_password=USERS[user])
    producer = KafkaProducer(**conf)
    producer.send(topic, b"hello " + mechanism.encode()).get(timeout=20)
    producer.close()
    consumer = KafkaConsumer(consumer_timeout_ms=10000, **conf)
    consumer.assign([TopicPartition(topic, 0)])
    consumer.seek_to_beginning()
    values = [m.value for m in consumer]
    consumer.close()
    assert values == [b"hello " + mechanism.encode()]


CONFLUENT_SCRIPT = r"""
import sys
from confluent_kafka import Consumer, Producer
bootstrap, mechanism, user, password, topic = sys.argv[1:6]
conf = {"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": mechanism,
        "sasl.username": user, "sasl.password": password, "broker.address.family": "v4"}
errors = []
p = Producer(dict(conf, **{"error_cb": lambda e: errors.append(str(e))}))
p.produce(topic, b"ck-" + mechanism.encode())
left = p.flush(20)
c = Consumer(dict(conf, **{"group.id": "ck-" + mechanism, "auto.offset.reset": "earliest"}))
c.subscribe([topic])
got = []
import time
deadline = time.time() + 30
while time.time() < deadline and not got:
    m = c.poll(1.0)
    if m is not None and m.error() is None:
        got.append(m.value())
c.close()
print(left, got, errors)
sys.exit(0 if left == 0 and got == [b"ck-" + mechanism.encode()] else 1)
"""


@pytest.mark.parametrize("mechanism,user", [("SCRAM-SHA-512", "alice"), ("PLAIN", "bob")])
def test_confluent_kafka_newest(eddy, mechanism, user):
    python = nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python)
    r = subprocess.run([python, "-c", CONFLUENT_SCRIPT, sasl_bootstrap(eddy), mechanism, user, USERS[user],
                        "sasl-ck-" + mechanism.lower()], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    assert r.returncode == 0, r.stdout.decode() + r.stderr.decode()[-3000:]


def test_wrong_password_and_unknown_user_are_refused(eddy):
    # A connection that stays authenticated through the refusals.
    sock = socket.create_connection(("127.0.0.1", sasl_port(eddy)))
    before = eddy.log_text().count("SASL: authentication of")
    for mechanism, user, password in [("SCRAM-SHA-512", "alice", "wrong"), ("SCRAM-SHA-512", "mallory", "x"),
                                      ("PLAIN", "alice", "wrong"), ("PLAIN", "mallory", "x")]:
        r = kcat(eddy, mechanism, user, password, ["-L", "-m", "5"])
        assert r.returncode != 0
        assert "Authentication failed" in r.stderr.decode(), r.stderr.decode()
    # The same message for a wrong password and an unknown user.
    log = eddy.log_text()
    assert log.count("SASL: authentication of") - before >= 4
    assert "user 'mallory': invalid credentials" in log
    # kafka-python (raw tokens after SaslHandshake v0): an error, no hang.
    with pytest.raises(KafkaError):
        KafkaProducer(bootstrap_servers=sasl_bootstrap(eddy), security_protocol="SASL_PLAINTEXT",
                      sasl_mechanism="SCRAM-SHA-256", sasl_plain_username="bob", sasl_plain_password="nope",
                      max_block_ms=5000, request_timeout_ms=5000, api_version_auto_timeout_ms=5000).send(
                          "x").get(timeout=10)
    # The untouched connection still gets answers (SaslHandshake v1).
    mech = b"PLAIN"
    sock.sendall(frame(17, 1, 7, struct.pack(">h", len(mech)) + mech))
    answer = read_frame(sock)
    assert answer is not None and struct.unpack(">ih", answer[:6]) == (7, 0)
    sock.close()
    # Other clients are unaffected.
    ok = kcat(eddy, "SCRAM-SHA-512", "alice", USERS["alice"], ["-L"])
    assert ok.returncode == 0, ok.stderr.decode()


def test_requests_before_authentication_close_the_connection(eddy):
    # Produce v3 (any body: the state is checked before the body is read).
    sock = socket.create_connection(("127.0.0.1", sasl_port(eddy)))
    sock.sendall(frame(0, 3, 1, b"\xff\xff\x00\x01\x00\x00\x03\xe8\x00\x00\x00\x00"))
    assert closed_by_peer(sock), "Produce before SASL closes the connection"
    # A client without SASL: kcat's Metadata goes unanswered.
    r = subprocess.run(["kcat", "-b", sasl_bootstrap(eddy), "-L", "-m", "5"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    assert r.returncode != 0
    assert "needs SASL authentication first" in eddy.log_text()
    # An unenabled mechanism: UNSUPPORTED_SASL_MECHANISM (33) with the list, then closed.
    sock = socket.create_connection(("127.0.0.1", sasl_port(eddy)))
    mech = b"GSSAPI"
    sock.sendall(frame(17, 1, 2, struct.pack(">h", len(mech)) + mech))
    answer = read_frame(sock)
    assert struct.unpack(">ih", answer[:6]) == (2, 33)
    assert b"SCRAM-SHA-512" in answer
    assert closed_by_peer(sock)
    # A frame larger than sasl.server.max.receive.size before authentication.
    sock = socket.create_connection(("127.0.0.1", sasl_port(eddy)))
    sock.sendall(struct.pack(">i", 600 * 1024))
    assert closed_by_peer(sock)
    # SaslHandshake on the PLAINTEXT listener: ILLEGAL_SASL_STATE (34), as Kafka.
    sock = socket.create_connection(("127.0.0.1", eddy.port))
    sock.sendall(frame(17, 1, 3, struct.pack(">h", len(mech)) + mech))
    answer = read_frame(sock)
    assert struct.unpack(">ih", answer[:6]) == (3, 34)
    sock.close()


def test_credentials_survive_a_restart(eddy):
    assert eddy.restart() == 0
    r = kcat(eddy, "SCRAM-SHA-512", "carol", USERS["carol"], ["-C", "-t", "sasl-kcat-scram-sha-512", "-o",
                                                              "beginning", "-e", "-q"])
    assert r.returncode == 0 and r.stdout.decode().split() == ["one", "two"], r.stderr.decode()
    r = kcat(eddy, "PLAIN", "bob", USERS["bob"], ["-L"])
    assert r.returncode == 0, r.stderr.decode()


def test_metrics_count_authentications(eddy_factory):
    broker = eddy_factory({"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
                           "eddy.metrics.listener": "http://127.0.0.1:0"})
    assert eddy_users(broker, "--add", "zoe", password="zoe-pw").returncode == 0
    assert kcat(broker, "SCRAM-SHA-512", "zoe", "zoe-pw", ["-L"]).returncode == 0
    assert kcat(broker, "SCRAM-SHA-512", "zoe", "bad", ["-L", "-m", "3"]).returncode != 0
    m = re.search(r"metrics listening on http://127\.0\.0\.1:(\d+)", broker.log_text())
    assert m, broker.log_text()[-2000:]
    port = int(m.group(1))
    import urllib.request
    text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10).read().decode()
    assert 'eddy_sasl_authentications_total{result="succeeded"} 1' in text, text
    failed = re.search(r'eddy_sasl_authentications_total\{result="failed"\} (\d+)', text)
    assert failed and int(failed.group(1)) >= 1, text


def plain_login(sock, correlation, user, password, version=1, mechanism=b"PLAIN"):
    """SaslHandshake v1 + SaslAuthenticate (v0 or v1, PLAIN): (error code,
    error message, session_lifetime_ms or None for v0)."""
    sock.sendall(frame(17, 1, correlation, struct.pack(">h", len(mechanism)) + mechanism))
    answer = read_frame(sock)
    assert answer is not None, "the handshake was answered"
    (got, code) = struct.unpack(">ih", answer[:6])
    if code != 0:
        return code, None, None
    token = b"\0" + user.encode() + b"\0" + password.encode()
    sock.sendall(frame(36, version, correlation + 1, struct.pack(">i", len(token)) + token))
    answer = read_frame(sock)
    assert answer is not None, "SaslAuthenticate was answered"
    (code, length) = struct.unpack(">hh", answer[4:8])
    message = answer[8:8 + length].decode() if length > 0 else None  # Kafka sends "" on success
    pos = 8 + max(length, 0)
    (auth_len,) = struct.unpack(">i", answer[pos:pos + 4])
    pos += 4 + max(auth_len, 0)
    lifetime = struct.unpack(">q", answer[pos:pos + 8])[0] if version >= 1 else None
    return code, message, lifetime


def metadata_answered(sock, correlation):
    """Metadata v1 for no topic: answered (True) or the connection closed (False)."""
    sock.sendall(frame(3, 1, correlation, struct.pack(">i", 0)))
    return read_frame(sock) is not None


REAUTH_SCRIPT = r"""
import json, sys, time
from confluent_kafka import Producer
bootstrap, user, password, topic, seconds = sys.argv[1:6]
errors, delivered = [], []
p = Producer({"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT",
              "sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": user, "sasl.password": password,
              "broker.address.family": "v4", "error_cb": lambda e: errors.append(str(e))})
deadline = time.time() + float(seconds)
i = 0
while time.time() < deadline:
    p.produce(topic, b"reauth-%d" % i, on_delivery=lambda e, m: delivered.append(e.str() if e else "ok"))
    i += 1
    p.poll(0.2)
p.flush(20)
print(json.dumps({"result": {"sent": i, "delivered": delivered, "errors": errors}}))
"""


def test_reauthentication(eddy_factory):
    """connections.max.reauth.ms (KIP-368): SaslAuthenticate v1 tells the
    session lifetime; a re-authentication on the same connection renews it;
    a request after the end closes the connection; re-authenticating as
    someone else or with another mechanism is refused; a v0 client cannot
    re-authenticate; the newest librdkafka re-authenticates by itself while
    it produces."""
    broker = eddy_factory({"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
                           "connections.max.reauth.ms": "2000"})
    for user in ("alice", "bob"):
        assert eddy_users(broker, "--add", user, password=USERS[user]).returncode == 0
    port = sasl_port(broker)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        assert plain_login(sock, 1, "alice", USERS["alice"]) == (0, None, 2000)
        assert metadata_answered(sock, 3)
        import time
        time.sleep(1.0)
        assert plain_login(sock, 4, "alice", USERS["alice"]) == (0, None, 2000)
        time.sleep(1.5)  # past the first login's end, inside the second's
        assert metadata_answered(sock, 6)
        time.sleep(2.2)
        assert not metadata_answered(sock, 7), "a request after the session's end closes the connection"
    eddy_fixture.wait_until(lambda: "SASL: the session of" in broker.log_text() and
                            "User:alice) ended without re-authentication" in broker.log_text(), 10,
                            "eddy to log the expired session")
    assert "re-authenticated as User:alice with PLAIN" in broker.log_text()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        assert plain_login(sock, 1, "alice", USERS["alice"])[0] == 0
        code, message, _ = plain_login(sock, 3, "bob", USERS["bob"])
        assert code == 58 and "Cannot change principals during re-authentication" in message, (code, message)
        assert closed_by_peer(sock)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        assert plain_login(sock, 1, "alice", USERS["alice"])[0] == 0
        assert plain_login(sock, 3, "alice", USERS["alice"], mechanism=b"SCRAM-SHA-512")[0] == 33
        assert closed_by_peer(sock)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        assert plain_login(sock, 1, "alice", USERS["alice"], version=0) == (0, None, None)
        assert plain_login(sock, 3, "alice", USERS["alice"])[0] == 34, "SaslAuthenticate v0 cannot re-authenticate"
    python = nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python)
    before = broker.log_text().count("re-authenticated as User:alice with SCRAM-SHA-512")
    result, _ = nc.run_for_result([python, "-c", REAUTH_SCRIPT, sasl_bootstrap(broker), "alice", USERS["alice"],
                                   "reauth-ck", "7"], broker.tmp, "reauth-ck", 120)
    assert result["delivered"] == ["ok"] * result["sent"] and result["sent"] >= 20, result
    renewed = broker.log_text().count("re-authenticated as User:alice with SCRAM-SHA-512") - before
    assert renewed >= 2, "librdkafka re-authenticated %d times in 7 s of 2 s sessions" % renewed
