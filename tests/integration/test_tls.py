"""TLS on the listeners (security protocol SSL), issue 15.

A throwaway PKI made with openssl in a temporary directory (module fixture
`pki`): a CA, a server certificate for 127.0.0.1 / localhost, a client
certificate (CN=client,O=Eddy Test), one signed by another CA and one that
expired in 2020. One eddy listens on PLAINTEXT and SSL side by side:
  1. kcat, kafka-python (Debian) and confluent-kafka (newest, PyPI) produce
     and consume over SSL; Metadata on the SSL port names the SSL port;
  2. a large batch fetched over SSL is byte for byte what plaintext gives
     (the file-region path: pread + encrypt instead of sendfile);
  3. a plaintext client on the SSL port and a TLS client on the plaintext
     port are closed, the failed handshake logged, while another plaintext
     client goes on working; a client that never finishes its handshake is
     closed after eddy.request.read.timeout.ms;
  4. ssl.client.auth=required (second eddy): no certificate, an untrusted
     CA's and an expired one are refused; a good one works and becomes the
     principal User:CN=client,O=Eddy Test, which is what the ACLs see
     (super.users names it; another certificate without ACLs may not
     produce);
  5. a missing keystore or a bad PEM makes `eddy serve` exit 2 naming the
     file;
  6. SASL_SSL: SCRAM-SHA-512 and PLAIN inside TLS (third eddy);
  7. Kafka's Java clients (kafka-console-producer and -consumer of Kafka
     4.4, PEM truststore, hostname verification on) over SSL, mutual TLS,
     and SASL_SSL with SCRAM-SHA-512 and PLAIN; a wrong password reported
     by the Java producer and nothing stored;
  8. ssl.principal.mapping.rules maps a certificate to User:client, an
     unmapped one is refused;
  9. Eddy's own tools (eddy produce / consume / topics) with Kafka's
     --command-config over SASL_SSL and mutual TLS.
"""

import os
import re
import socket
import ssl
import subprocess
import textwrap

import pytest

import eddy_fixture
import kafka_fixture
import kafka_wire
import newest_clients as nc

SSL_LISTENING = re.compile(rb"listening on SSL://127\.0\.0\.1:(\d+)")


def openssl(*args, cwd):
    proc = subprocess.run(["openssl"] + list(args), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.returncode == 0, "openssl %s: %s" % (" ".join(args), proc.stdout.decode(errors="replace"))


def make_ca(d, name, cn):
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".pem",
            "-days", "30", "-subj", "/CN=" + cn, cwd=d)


def make_cert(d, name, subject, ca, san=None):
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr",
            "-subj", subject, cwd=d)
    extra = []
    if san:
        with open(os.path.join(d, name + ".ext"), "w") as f:
            f.write("subjectAltName=%s\n" % san)
        extra = ["-extfile", name + ".ext"]
    openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key", "-CAcreateserial",
            "-out", name + ".crt", "-days", "30", *extra, cwd=d)


def make_expired_cert(d, name, subject, ca):
    """A certificate valid only in January 2020 (`openssl ca` takes explicit
    dates; `x509 -req` in OpenSSL 3.0 does not)."""
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr",
            "-subj", subject, cwd=d)
    open(os.path.join(d, "index.txt"), "w").close()
    with open(os.path.join(d, "ca.cnf"), "w") as f:
        f.write(textwrap.dedent("""\
            [ca]
            default_ca = test
            [test]
            database = index.txt
            new_certs_dir = .
            serial = expired.srl
            default_md = sha256
            policy = any
            [any]
            commonName = supplied
            organizationName = optional
            """))
    with open(os.path.join(d, "expired.srl"), "w") as f:
        f.write("1000\n")
    openssl("ca", "-batch", "-config", "ca.cnf", "-cert", ca + ".pem", "-keyfile", ca + ".key",
            "-startdate", "20200101000000Z", "-enddate", "20200201000000Z", "-notext",
            "-in", name + ".csr", "-out", name + ".crt", cwd=d)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("pki"))
    make_ca(d, "ca", "Eddy Test CA")
    make_ca(d, "other-ca", "Someone Else CA")
    make_cert(d, "server", "/CN=localhost", "ca", san="IP:127.0.0.1,DNS:localhost")
    make_cert(d, "client", "/O=Eddy Test/CN=client", "ca")
    make_cert(d, "reader", "/O=Eddy Test/CN=reader", "ca")
    make_cert(d, "stranger", "/CN=stranger", "other-ca")
    make_expired_cert(d, "expired", "/O=Eddy Test/CN=expired", "ca")
    with open(os.path.join(d, "server.pem"), "w") as out:
        for part in ("server.crt", "server.key"):
            with open(os.path.join(d, part)) as f:
                out.write(f.read())
    return {name: os.path.join(d, name) for name in os.listdir(d)} | {"dir": d}


def ssl_port(broker):
    m = SSL_LISTENING.search(broker.log_bytes())
    assert m, "eddy did not log its SSL listener:\n" + broker.log_text()
    return int(m.group(1))


def tls_overrides(pki, **extra):
    o = {"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
         "ssl.keystore.location": pki["server.pem"]}
    o.update(extra)
    return o


@pytest.fixture(scope="module")
def eddy_overrides(pki):
    return tls_overrides(pki, **{"eddy.log.level": "debug", "eddy.request.read.timeout.ms": "2000"})


@pytest.fixture(scope="module")
def sport(eddy):
    return ssl_port(eddy)


def kcat(args, timeout=60, input=None):
    return subprocess.run(["kcat"] + args, input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout)


def kcat_ssl(pki, port, *cert):
    args = ["-b", "127.0.0.1:%d" % port, "-X", "security.protocol=ssl", "-X", "ssl.ca.location=" + pki["ca.pem"]]
    if cert:
        args += ["-X", "ssl.certificate.location=" + pki[cert[0] + ".crt"],
                 "-X", "ssl.key.location=" + pki[cert[0] + ".key"]]
    return args


def kcat_roundtrip(conn_args, topic, count=200):
    lines = b"".join(b"k%d:v%d\n" % (i, i) for i in range(count))
    p = kcat(conn_args + ["-P", "-t", topic, "-K", ":"], input=lines)
    assert p.returncode == 0, "kcat produce: " + p.stderr.decode(errors="replace")
    c = kcat(conn_args + ["-C", "-t", topic, "-o", "beginning", "-e", "-f", "%k:%s\n"])
    assert c.returncode == 0, "kcat consume: " + c.stderr.decode(errors="replace")
    assert sorted(c.stdout.splitlines()) == sorted(lines.splitlines()), "kcat over SSL: what was produced"


def test_kcat_over_ssl(eddy, pki, sport):
    kcat_roundtrip(kcat_ssl(pki, sport), "tls-kcat")
    meta = kcat(kcat_ssl(pki, sport) + ["-L", "-t", "tls-kcat"])
    assert meta.returncode == 0, meta.stderr
    assert b"127.0.0.1:%d" % sport in meta.stdout, "Metadata on the SSL port advertises the SSL port"
    assert b"127.0.0.1:%d" % eddy.port not in meta.stdout, "...not the plaintext one"


def test_kafka_python_over_ssl(eddy, pki, sport):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    common = dict(bootstrap_servers="127.0.0.1:%d" % sport, security_protocol="SSL", ssl_cafile=pki["ca.pem"])
    producer = KafkaProducer(**common)
    for i in range(100):
        producer.send("tls-kp", key=b"%d" % i, value=b"value-%d" % i)
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(consumer_timeout_ms=10000, **common)
    tp = TopicPartition("tls-kp", 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    got = [m.value for m in consumer]
    consumer.close()
    assert got == [b"value-%d" % i for i in range(100)]


CONFLUENT_SCRIPT = r"""
import json, sys
from confluent_kafka import Consumer, Producer
bootstrap, ca = sys.argv[1], sys.argv[2]
conf = {"bootstrap.servers": bootstrap, "security.protocol": "SSL", "ssl.ca.location": ca}
p = Producer(dict(conf, **{"enable.idempotence": True}))
for i in range(150):
    p.produce("tls-ck", key=b"%d" % i, value=b"ck-%d" % i)
left = p.flush(30)
c = Consumer(dict(conf, **{"group.id": "tls-ck", "auto.offset.reset": "earliest"}))
c.subscribe(["tls-ck"])
values, errors = [], []
import time
deadline = time.time() + 60
while len(values) < 150 and time.time() < deadline:
    m = c.poll(1.0)
    if m is None:
        continue
    if m.error():
        errors.append(str(m.error()))
        continue
    values.append(m.value().decode())
c.close()
print(json.dumps({"result": {"unflushed": left, "values": values, "errors": errors}}))
"""


def test_confluent_kafka_newest_over_ssl(eddy, pki, sport):
    python = nc.provision("confluent-kafka %s (venv)" % nc.CONFLUENT_KAFKA, nc.venv_python)
    nc.ensure_topic(eddy, "tls-ck", 1)
    result, _run = nc.run_for_result([python, "-c", CONFLUENT_SCRIPT, "127.0.0.1:%d" % sport, pki["ca.pem"]],
                                     eddy.tmp, "confluent-tls", 120)
    assert result["unflushed"] == 0
    assert result["values"] == ["ck-%d" % i for i in range(150)], result.get("errors")


def test_large_fetch_same_bytes_over_ssl(eddy, pki, sport):
    """~6 MB in 1 KiB records, consumed over both listeners: the SSL fetch
    reads the segment range through the 16 KiB chunk and encrypts it."""
    from kafka import KafkaProducer
    producer = KafkaProducer(bootstrap_servers=eddy.bootstrap, batch_size=900000, linger_ms=50,
                             max_request_size=1048576)
    for i in range(6000):
        producer.send("tls-large", key=b"%06d" % i, value=(b"%06d" % i) * 170)
    producer.flush(60)
    producer.close()
    fmt = ["-C", "-t", "tls-large", "-o", "beginning", "-e", "-f", "%p %o %k %s\n", "-X", "fetch.max.bytes=8388608"]
    plain = kcat(["-b", eddy.bootstrap] + fmt)
    over_tls = kcat(kcat_ssl(pki, sport) + fmt)
    assert plain.returncode == 0, plain.stderr
    assert over_tls.returncode == 0, over_tls.stderr
    assert len(plain.stdout.splitlines()) == 6000, (len(plain.stdout.splitlines()), plain.stderr[-2000:])
    assert over_tls.stdout == plain.stdout, ("the same records over SSL as over PLAINTEXT",
                                             len(over_tls.stdout.splitlines()), over_tls.stderr[-2000:])


def plaintext_works(eddy, topic):
    kcat_roundtrip(["-b", eddy.bootstrap], topic, count=20)


def test_plaintext_client_on_ssl_port_is_closed(eddy, sport):
    with kafka_wire.Connection(sport) as conn:
        conn.send(18, 0, kafka_wire.api_versions_v0())
        assert conn.closed_by_peer(timeout=10), "a plaintext request on the SSL port closes the connection"
    eddy_fixture.wait_until(lambda: b"TLS handshake with 127.0.0.1:" in eddy.log_bytes(), 10,
                            "the failed handshake to be logged")
    plaintext_works(eddy, "tls-after-plain-on-ssl")


def test_stalled_handshake_is_closed(eddy, sport):
    """A client that connects and never says hello holds its slot only for
    eddy.request.read.timeout.ms (2 s here)."""
    with kafka_wire.Connection(sport) as conn:
        assert conn.closed_by_peer(timeout=10), "the silent client is closed"
    eddy_fixture.wait_until(lambda: b"not finished in time" in eddy.log_bytes() or
                            b"more failed handshakes" in eddy.log_bytes(), 10, "the timeout logged")


def test_tls_client_on_plaintext_port_is_closed(eddy):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", eddy.port), timeout=10) as raw:
        with pytest.raises((ssl.SSLError, OSError)):
            with ctx.wrap_socket(raw) as tls:
                tls.recv(1)
    plaintext_works(eddy, "tls-after-ssl-on-plain")


def test_principal_is_anonymous_without_client_auth(eddy, pki, sport):
    kcat(kcat_ssl(pki, sport) + ["-L"])
    assert re.search(rb"TLSv1\.2 \S+ as User:ANONYMOUS", eddy.log_bytes()), "debug log names the session"


@pytest.fixture(scope="module")
def mtls_eddy(eddy_factory, pki):
    broker = eddy_factory(tls_overrides(pki, **{"ssl.client.auth": "required",
                                                "ssl.truststore.location": pki["ca.pem"],
                                                "eddy.log.level": "debug"}))
    return broker, ssl_port(broker)


def test_mtls_good_certificate(mtls_eddy, pki):
    broker, port = mtls_eddy
    kcat_roundtrip(kcat_ssl(pki, port, "client"), "tls-mtls")
    assert b"as User:CN=client,O=Eddy Test" in broker.log_bytes(), \
        "the principal is the client certificate's subject in RFC 2253 form"
    # Eddy's own tools with the client certificate in --command-config.
    keystore = os.path.join(broker.tmp, "client-keystore.pem")
    with open(keystore, "w") as out:
        for part in ("client.crt", "client.key"):
            with open(pki[part]) as f:
                out.write(f.read())
    config = os.path.join(broker.tmp, "mtls.properties")
    with open(config, "w") as f:
        f.write("security.protocol=SSL\nssl.truststore.location=%s\nssl.keystore.type=PEM\n"
                "ssl.keystore.location=%s\nssl.endpoint.identification.algorithm=\n" % (pki["ca.pem"], keystore))
    eddy_tools_roundtrip(broker, port, config, "mtls-eddy-tools")
    # Without the certificate the tool is refused by the handshake and says so.
    with open(config, "w") as f:
        f.write("security.protocol=SSL\nssl.truststore.location=%s\nssl.endpoint.identification.algorithm=\n"
                % pki["ca.pem"])
    r = subprocess.run([broker.bin, "topics", "--bootstrap-server", "127.0.0.1:%d" % port, "--command-config", config,
                        "--list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 1 and "TLS handshake with 127.0.0.1:%d" % port in r.stderr.decode(), \
        r.stderr.decode()


@pytest.mark.parametrize("cert", [None, "stranger", "expired"])
def test_mtls_refused(mtls_eddy, pki, cert):
    broker, port = mtls_eddy
    before = broker.log_bytes().count(b"TLS handshake with")
    args = kcat_ssl(pki, port, *([cert] if cert else [])) + ["-L", "-m", "5"]
    p = kcat(args)
    assert p.returncode != 0 or b"brokers" not in p.stdout, "refused: %s" % cert
    eddy_fixture.wait_until(lambda: broker.log_bytes().count(b"TLS handshake with") > before or
                            b"more failed handshakes" in broker.log_bytes(), 10, "the refusal logged")


def test_client_certificate_principal_under_acls(eddy_factory, pki):
    """With an authorizer, the principal the ACLs see is the certificate's
    subject: super.users names the client certificate's, which may do
    anything; the reader certificate (same CA, no ACL) may not produce."""
    broker = eddy_factory(tls_overrides(pki, **{
        "ssl.client.auth": "required", "ssl.truststore.location": pki["ca.pem"],
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:CN=client,O=Eddy Test"}))
    port = ssl_port(broker)
    kcat_roundtrip(kcat_ssl(pki, port, "client"), "tls-acl", count=20)
    p = kcat(kcat_ssl(pki, port, "reader") + ["-P", "-t", "tls-acl"], input=b"refused\n")
    assert b"authorization failed" in p.stderr.lower() or p.returncode != 0, p.stderr
    eddy_fixture.wait_until(lambda: b"principal User:CN=reader,O=Eddy Test may not" in broker.log_bytes(), 10,
                            "the refusal names the certificate's principal")
    c = kcat(kcat_ssl(pki, port, "client") + ["-C", "-t", "tls-acl", "-o", "beginning", "-e"])
    assert b"refused" not in c.stdout and c.stdout.count(b"\n") == 20, c.stdout


def test_principal_mapping_rules(eddy_factory, pki):
    """ssl.principal.mapping.rules (per listener, as Kafka allows): the client
    certificate CN=client,O=Eddy Test becomes User:client, which super.users
    names; a certificate no rule maps (reader) is refused at once, and eddy
    says why."""
    broker = eddy_factory(tls_overrides(pki, **{
        "ssl.client.auth": "required", "ssl.truststore.location": pki["ca.pem"],
        "listener.name.ssl.ssl.principal.mapping.rules": "RULE:^CN=(client),O=Eddy Test$/$1/L",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:client", "eddy.log.level": "debug"}))
    port = ssl_port(broker)
    kcat_roundtrip(kcat_ssl(pki, port, "client"), "tls-mapped", count=20)
    assert b"as User:client" in broker.log_bytes(), broker.log_text()[-2000:]
    p = kcat(kcat_ssl(pki, port, "reader") + ["-L", "-m", "5"])
    assert p.returncode != 0 or b"brokers" not in p.stdout, p.stdout
    eddy_fixture.wait_until(
        lambda: b"no ssl.principal.mapping.rules rule applies to CN=reader,O=Eddy Test; closing it" in
        broker.log_bytes(), 10, "the refusal of an unmapped certificate")
    assert broker.alive()


def test_mtls_requested_accepts_no_certificate(eddy_factory, pki):
    broker = eddy_factory(tls_overrides(pki, **{"ssl.client.auth": "requested",
                                                "ssl.truststore.location": pki["ca.pem"]}))
    port = ssl_port(broker)
    kcat_roundtrip(kcat_ssl(pki, port), "tls-requested-anon", count=10)
    kcat_roundtrip(kcat_ssl(pki, port, "client"), "tls-requested-cert", count=10)
    p = kcat(kcat_ssl(pki, port, "stranger") + ["-L", "-m", "5"])
    assert p.returncode != 0 or b"brokers" not in p.stdout, "a presented certificate must verify"


SASL_SSL_LISTENING = re.compile(rb"listening on SASL_SSL://127\.0\.0\.1:(\d+)")


def test_sasl_ssl_scram_and_plain(eddy_factory, pki):
    """SASL_SSL: SASL inside TLS. A user made with `eddy users` (on the
    plaintext listener) logs in over TLS with SCRAM-SHA-512 and PLAIN; a
    wrong password is refused; a client that speaks TLS without SASL gets
    nothing served."""
    broker = eddy_factory({"listeners": "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
                           "ssl.keystore.location": pki["server.pem"]})
    m = SASL_SSL_LISTENING.search(broker.log_bytes())
    assert m, "eddy logs its SASL_SSL listener:\n" + broker.log_text()
    port = int(m.group(1))
    added = subprocess.run([broker.bin, "users", "--bootstrap-server", broker.bootstrap, "--add", "tess",
                            "--mechanism", "SCRAM-SHA-512"], input=b"tls-secret\n", stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
    assert added.returncode == 0, added.stderr

    def sasl(mechanism, password):
        return kcat_ssl(pki, port)[:2] + ["-X", "security.protocol=sasl_ssl", "-X", "ssl.ca.location=" + pki["ca.pem"],
                                          "-X", "sasl.mechanisms=" + mechanism, "-X", "sasl.username=tess",
                                          "-X", "sasl.password=" + password]

    kcat_roundtrip(sasl("SCRAM-SHA-512", "tls-secret"), "sasl-ssl-scram", count=50)
    kcat_roundtrip(sasl("PLAIN", "tls-secret"), "sasl-ssl-plain", count=50)
    wrong = kcat(sasl("SCRAM-SHA-512", "not-it") + ["-L", "-m", "5"])
    assert wrong.returncode != 0 or b"brokers" not in wrong.stdout, "a wrong password over SASL_SSL is refused"
    no_sasl = kcat(kcat_ssl(pki, port) + ["-L", "-m", "5"])
    assert no_sasl.returncode != 0 or b"brokers" not in no_sasl.stdout, "TLS without SASL is served nothing"
    # Eddy's own tools over SASL_SSL with Kafka's --command-config (mbedTLS
    # matches no IP address SANs: the broker is reached as 127.0.0.1, so
    # only the chain is verified here).
    config = os.path.join(broker.tmp, "tess.properties")
    with open(config, "w") as f:
        f.write("security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\nsasl.username=tess\n"
                "sasl.password=tls-secret\nssl.truststore.type=PEM\nssl.truststore.location=%s\n"
                "ssl.endpoint.identification.algorithm=\n" % pki["ca.pem"])
    eddy_tools_roundtrip(broker, port, config, "sasl-ssl-eddy-tools")


def eddy_tools_roundtrip(broker, port, config, topic, count=20):
    """eddy produce, then eddy consume, of count lines through port with --command-config."""
    lines = ["%s-%d" % (topic, i) for i in range(count)]
    common = ["--bootstrap-server", "127.0.0.1:%d" % port, "--command-config", config, "--topic", topic]
    produced = subprocess.run([broker.bin, "produce"] + common, input=("\n".join(lines) + "\n").encode(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert produced.returncode == 0, produced.stderr.decode()
    consumed = subprocess.run([broker.bin, "consume"] + common + ["--from-beginning", "--max-messages", str(count)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert consumed.returncode == 0 and consumed.stdout.decode().splitlines() == lines, consumed.stderr.decode()


JAVA_PRODUCER = "org.apache.kafka.tools.ConsoleProducer"
JAVA_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"


def java_roundtrip(port, topic, client_config, tmp, count=100, expect_existing=0):
    """Kafka's Java clients (kafka-console-producer / -consumer of Kafka 4.4)
    with client_config's security keys: count lines in, the same read back
    after the expect_existing lines a former round trip left there."""
    config = os.path.join(tmp, topic + ".properties")
    with open(config, "w") as f:
        f.write("".join("%s=%s\n" % kv for kv in client_config.items()))
    lines = ["%s-%d" % (topic, i) for i in range(count)]
    bootstrap = "127.0.0.1:%d" % port
    produced = kafka_fixture.java_tool(JAVA_PRODUCER, ["--bootstrap-server", bootstrap, "--topic", topic,
                                                       "--command-config", config],
                                       input_bytes=("\n".join(lines) + "\n").encode())
    assert produced.returncode == 0, "Java producer over %s: %s" % (
        client_config["security.protocol"], (produced.stdout + produced.stderr).decode(errors="replace")[-3000:])
    consumed = kafka_fixture.java_tool(JAVA_CONSUMER, ["--bootstrap-server", bootstrap, "--topic", topic,
                                                       "--command-config", config, "--from-beginning",
                                                       "--max-messages", str(expect_existing + count),
                                                       "--timeout-ms", "30000"])
    got = consumed.stdout.decode(errors="replace").split()[expect_existing:]
    assert got == lines, "Java consumer over %s read %d of %d lines: %s" % (
        client_config["security.protocol"], len(got), count, consumed.stderr.decode(errors="replace")[-3000:])


def java_tls(pki):
    # The server certificate names IP:127.0.0.1, so Java's default hostname
    # verification (https) stays on.
    return {"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": pki["ca.pem"]}


def test_java_clients_over_ssl(eddy, pki, sport, tmp_path):
    java_roundtrip(sport, "java-ssl", java_tls(pki), str(tmp_path))


def test_java_clients_over_mtls(mtls_eddy, pki, tmp_path):
    broker, port = mtls_eddy
    client_pem = os.path.join(str(tmp_path), "client.pem")
    with open(client_pem, "w") as out:
        for part in ("client.key", "client.crt"):
            with open(pki[part]) as f:
                out.write(f.read())
    java_roundtrip(port, "java-mtls", {**java_tls(pki), "ssl.keystore.type": "PEM",
                                       "ssl.keystore.location": client_pem}, str(tmp_path))
    assert b"as User:CN=client,O=Eddy Test" in broker.log_bytes()


def test_java_clients_over_sasl_ssl(eddy_factory, pki, tmp_path):
    """SASL_SSL with SCRAM-SHA-512 and with PLAIN; a wrong password makes
    the Java producer fail with an authentication error."""
    broker = eddy_factory({"listeners": "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
                           "ssl.keystore.location": pki["server.pem"]})
    port = int(SASL_SSL_LISTENING.search(broker.log_bytes()).group(1))
    added = subprocess.run([broker.bin, "users", "--bootstrap-server", broker.bootstrap, "--add", "jay",
                            "--mechanism", "SCRAM-SHA-512"], input=b"java-secret\n", stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
    assert added.returncode == 0, added.stderr

    def sasl(mechanism, module, password):
        return {**java_tls(pki), "security.protocol": "SASL_SSL", "sasl.mechanism": mechanism,
                "sasl.jaas.config": 'org.apache.kafka.common.security.%s required username="jay" password="%s";'
                                    % (module, password)}

    java_roundtrip(port, "java-sasl-scram", sasl("SCRAM-SHA-512", "scram.ScramLoginModule", "java-secret"),
                   str(tmp_path))
    java_roundtrip(port, "java-sasl-plain", sasl("PLAIN", "plain.PlainLoginModule", "java-secret"), str(tmp_path))
    # A wrong password: the producer reports the authentication failure
    # (kafka-console-producer logs it and exits 0) and stores nothing.
    config = os.path.join(str(tmp_path), "wrong.properties")
    with open(config, "w") as f:
        f.write("".join("%s=%s\n" % kv for kv in sasl("SCRAM-SHA-512", "scram.ScramLoginModule", "not-it").items()))
    wrong = kafka_fixture.java_tool(JAVA_PRODUCER, ["--bootstrap-server", "127.0.0.1:%d" % port, "--topic",
                                                    "java-sasl-scram", "--command-config", config],
                                    input_bytes=b"not stored\n")
    out = (wrong.stdout + wrong.stderr).decode(errors="replace")
    assert "SaslAuthenticationException" in out or "Authentication failed" in out, out[-3000:]
    java_roundtrip(port, "java-sasl-scram", sasl("SCRAM-SHA-512", "scram.ScramLoginModule", "java-secret"),
                   str(tmp_path), count=100, expect_existing=100)


def serve_fails(pki, tmp, overrides):
    cmd = [os.environ["EDDY_BIN"], "serve", "--override", "log.dirs=" + os.path.join(tmp, "data")]
    for k, v in tls_overrides(pki, **overrides).items():
        cmd += ["--override", "%s=%s" % (k, v)]
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30, text=True)


def test_bad_keystore_exits_2(pki, tmp_path):
    missing = os.path.join(pki["dir"], "no-such.pem")
    p = serve_fails(pki, str(tmp_path), {"ssl.keystore.location": missing})
    assert p.returncode == 2, p.stderr
    assert missing in p.stderr and "No such file" in p.stderr
    p = serve_fails(pki, str(tmp_path), {"ssl.keystore.location": pki["server.csr"]})
    assert p.returncode == 2 and pki["server.csr"] in p.stderr, p.stderr
    p = serve_fails(pki, str(tmp_path), {"ssl.truststore.location": pki["server.key"], "ssl.client.auth": "required"})
    assert p.returncode == 2 and pki["server.key"] in p.stderr, p.stderr
    p = serve_fails(pki, str(tmp_path), {"ssl.enabled.protocols": "TLSv1.3"})
    assert p.returncode == 2 and "TLSv1.3" in p.stderr, p.stderr
    p = serve_fails(pki, str(tmp_path), {"ssl.cipher.suites": "TLS_NO_SUCH_SUITE"})
    assert p.returncode == 2 and "TLS_NO_SUCH_SUITE" in p.stderr, p.stderr
    p = serve_fails(pki, str(tmp_path), {"ssl.principal.mapping.rules": "RULE:^CN=(.*?)/$1/LU"})
    assert p.returncode == 2 and "ssl.principal.mapping.rules: Invalid rule" in p.stderr, p.stderr
