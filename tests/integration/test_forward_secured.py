"""Secured forward links (issue 15, the uplink side) against a real Apache
Kafka 4.4 central cluster: one Kafka node (kafka_fixture.KafkaCluster) with,
next to its PLAINTEXT listener (inter-broker, admin, the checks), three
client listeners on a test CA's certificate for DNS:localhost (mbedTLS
matches no IP address SANs, so they are advertised as localhost):

  SASLSSL  SASL_SSL with SCRAM-SHA-512 only (users made with kafka-configs)
  SSL      TLS, no client certificates
  MTLS     TLS with ssl.client.auth=required (the test CA verifies them)
  SASLPLAIN  SASL_PLAINTEXT with PLAIN only (no TLS)

One edge eddy runs one link per case, each forwarding its own local topic:

  scram      SASL_SSL + SCRAM-SHA-512 (sasl.jaas.config): every numbered
             message arrives exactly once, in order (Java NumberedCheck)
  tls        SSL only, hostname verification on
  plain      SASL_PLAINTEXT + PLAIN (sasl.username, sasl.password) to the
             SASLPLAIN listener (PLAIN users in Kafka's JAAS text)
  mtls       SSL with a client certificate (ssl.keystore.location)
  mtlsenc    the same with the key encrypted (ssl.key.password)
  late       SASL_SSL with a password (in sasl.password.file) Kafka does
             not accept: backing-off with the authentication failure in
             `eddy forward status`, retried with the backoff (a few
             connections in 5 s through a counting TCP proxy, not a tight
             loop); setting that password for the user in Kafka
             (kafka-configs) lets it deliver without a restart
  mechanism  SASL_SSL with SCRAM-SHA-256, which the listener does not
             enable: backing-off with UNSUPPORTED_SASL_MECHANISM
  untrusted  SSL with a truststore of another CA: backing-off with the TLS
             reason, retried with the backoff
  wrongname  SSL to 127.0.0.1 (the certificate names localhost): backing-off
             with the hostname mismatch
  denied     SASL_SSL as a SCRAM user Kafka's ACLs do not let write (or
             describe) its central topic: the topic pauses, naming the
             refusal, and nothing is written centrally; once an operator
             grants the user Write, Describe and Create (kafka-acls), it
             resumes without a restart and every message arrives once

Kafka runs its StandardAuthorizer, with allow.everyone.if.no.acl.found=true
(the other links' topics have no ACLs) and User:ANONYMOUS (the PLAINTEXT,
controller and plain-TLS listeners) as a super user.

No password ever shows in eddy's log or in `eddy forward status`.
Configuration mistakes (missing files, bad JAAS text, a SASL link without
credentials) stop `eddy serve` with exit 2 naming the key and the file.

usage: python3 -m pytest test_forward_secured.py --program RDKAFKA_IDEMPOTENCE_PROGRAM"""

import os
import subprocess
import time

import pytest

import eddy_fixture
import forward_fixture as ff
import kafka_fixture
from fault_proxy import FaultProxy

COUNT = int(os.environ.get("EDDY_FORWARD_SECURED_COUNT", "20000"))
PARTITIONS = 2
CONFIGS = "org.apache.kafka.tools.ConfigCommand"
ACLS = "org.apache.kafka.tools.AclCommand"
SCRAM_PASSWORD = "scram-Secret-1"
LATE_PASSWORD = "late-secret-2"
PLAIN_PASSWORD = "plain-Secret-3"
KEY_PASSWORD = "key-Secret-4"
LINKS = ("scram", "plain", "tls", "mtls", "mtlsenc", "late", "mechanism", "untrusted", "wrongname", "denied")


def openssl(args, cwd):
    proc = subprocess.run(["openssl"] + args, cwd=cwd, capture_output=True, text=True)
    assert proc.returncode == 0, "openssl %s: %s" % (" ".join(args), proc.stderr)


def make_pki(d):
    """ca.pem (trusted) and other-ca.pem (not), server.pem (localhost,
    chain + key, what Kafka's and Eddy's ssl.keystore.location take) and
    client.pem (CN=gateway-7) signed by ca.pem."""
    for ca, cn in (("ca", "Eddy Test CA"), ("other-ca", "Someone Else's CA")):
        openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca + ".key", "-out", ca + ".pem",
                 "-days", "2", "-subj", "/CN=" + cn], d)
    with open(os.path.join(d, "server.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    with open(os.path.join(d, "client.ext"), "w") as f:
        f.write("extendedKeyUsage=clientAuth\n")
    for name, cn in (("server", "localhost"), ("client", "gateway-7")):
        openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr",
                 "-subj", "/CN=" + cn], d)
        openssl(["x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", name + ".crt", "-days", "2", "-extfile", name + ".ext"], d)
        with open(os.path.join(d, name + ".pem"), "w") as out:
            for part in (name + ".crt", name + ".key"):
                with open(os.path.join(d, part)) as f:
                    out.write(f.read())
    # The client key encrypted as mbedTLS 2.28 reads it (PKCS#8, 3DES,
    # PBKDF2-HMAC-SHA1), for ssl.key.password.
    openssl(["pkcs8", "-topk8", "-v2", "des3", "-v2prf", "hmacWithSHA1", "-in", "client.key", "-out",
             "client-enc.key", "-passout", "pass:" + KEY_PASSWORD], d)
    with open(os.path.join(d, "client-enc.pem"), "w") as out:
        for part in ("client.crt", "client-enc.key"):
            with open(os.path.join(d, part)) as f:
                out.write(f.read())
    return {k: os.path.join(d, k + ".pem") for k in ("ca", "other-ca", "server", "client", "client-enc")}


class SecuredKafka(kafka_fixture.KafkaCluster):
    """One Kafka node with the SASLSSL, SSL and MTLS listeners above."""

    def __init__(self, pki, tmp):
        super().__init__(1, heap_mb=512, tmp=tmp)
        self.secure_ports = {name: kafka_fixture.free_port() for name in ("SASLSSL", "SSL", "MTLS", "SASLPLAIN")}
        plain, ctrl = self.ports[1], self.controller_ports[1]
        bound = ",".join("%s://127.0.0.1:%d" % (n, p) for n, p in self.secure_ports.items())
        advertised = ",".join("%s://localhost:%d" % (n, p) for n, p in self.secure_ports.items())
        self.extra.update({
            "listeners": "PLAINTEXT://127.0.0.1:%d,%s,CONTROLLER://127.0.0.1:%d" % (plain, bound, ctrl),
            "advertised.listeners": "PLAINTEXT://127.0.0.1:%d,%s" % (plain, advertised),
            "listener.security.protocol.map":
                "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASLSSL:SASL_SSL,SSL:SSL,MTLS:SSL,"
                "SASLPLAIN:SASL_PLAINTEXT",
            "listener.name.saslplain.sasl.enabled.mechanisms": "PLAIN",
            "listener.name.saslplain.plain.sasl.jaas.config":
                "org.apache.kafka.common.security.plain.PlainLoginModule required user_gateway=\"%s\";"
                % PLAIN_PASSWORD,
            "listener.name.saslssl.sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "listener.name.saslssl.scram-sha-512.sasl.jaas.config":
                "org.apache.kafka.common.security.scram.ScramLoginModule required;",
            "listener.name.mtls.ssl.client.auth": "required",
            "listener.name.mtls.ssl.truststore.type": "PEM",
            "listener.name.mtls.ssl.truststore.location": pki["ca"],
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "allow.everyone.if.no.acl.found": "true",
            "super.users": "User:ANONYMOUS",
        })
        for name in ("SASLSSL", "SSL", "MTLS"):
            prefix = "listener.name.%s." % name.lower()
            self.extra[prefix + "ssl.keystore.type"] = "PEM"
            self.extra[prefix + "ssl.keystore.location"] = pki["server"]
        self._write_config(1)

    def add_scram_user(self, user, password):
        proc = kafka_fixture.java_tool(CONFIGS, ["--bootstrap-server", self.bootstrap, "--alter", "--add-config",
                                                 "SCRAM-SHA-512=[iterations=4096,password=%s]" % password,
                                                 "--entity-type", "users", "--entity-name", user])
        assert proc.returncode == 0, "kafka-configs: %s" % proc.stderr.decode()[-3000:]

    def allow(self, user, topic, *operations):
        args = ["--bootstrap-server", self.bootstrap, "--add", "--allow-principal", "User:" + user, "--topic", topic]
        for operation in operations:
            args += ["--operation", operation]
        proc = kafka_fixture.java_tool(ACLS, args)
        assert proc.returncode == 0, "kafka-acls: %s" % proc.stderr.decode()[-3000:]


def jaas_quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def link_keys(pki, ports, proxies, password_file):
    """Every link's eddy.forward.* overrides."""
    common = {"retry.backoff.ms": "100", "retry.backoff.max.ms": "1000", "request.timeout.ms": "5000",
              "socket.connection.setup.timeout.ms": "2000", "linger.ms": "10", "paused.retry.ms": "1000"}
    per_link = {
        "scram": {"bootstrap.servers": "localhost:%d" % ports["SASLSSL"], "security.protocol": "SASL_SSL",
                  "sasl.mechanism": "SCRAM-SHA-512",
                  "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
                                      "username=\"gateway\" password=%s;" % jaas_quote(SCRAM_PASSWORD),
                  "ssl.truststore.location": pki["ca"]},
        "plain": {"bootstrap.servers": "localhost:%d" % ports["SASLPLAIN"], "security.protocol": "SASL_PLAINTEXT",
                  "sasl.username": "gateway", "sasl.password": PLAIN_PASSWORD},
        "mtlsenc": {"bootstrap.servers": "localhost:%d" % ports["MTLS"], "security.protocol": "SSL",
                    "ssl.truststore.location": pki["ca"], "ssl.keystore.location": pki["client-enc"],
                    "ssl.key.password": KEY_PASSWORD},
        "tls": {"bootstrap.servers": "localhost:%d" % ports["SSL"], "security.protocol": "SSL",
                "ssl.truststore.location": pki["ca"]},
        "mtls": {"bootstrap.servers": "localhost:%d" % ports["MTLS"], "security.protocol": "SSL",
                 "ssl.truststore.location": pki["ca"], "ssl.keystore.location": pki["client"]},
        "late": {"bootstrap.servers": "localhost:%d" % proxies["late"].port, "security.protocol": "SASL_SSL",
                 "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "late", "sasl.password.file": password_file,
                 "ssl.truststore.location": pki["ca"]},
        "mechanism": {"bootstrap.servers": "localhost:%d" % ports["SASLSSL"], "security.protocol": "SASL_SSL",
                      "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "gateway", "sasl.password": SCRAM_PASSWORD,
                      "ssl.truststore.location": pki["ca"]},
        "untrusted": {"bootstrap.servers": "localhost:%d" % proxies["untrusted"].port, "security.protocol": "SSL",
                      "ssl.truststore.location": pki["other-ca"]},
        "wrongname": {"bootstrap.servers": "127.0.0.1:%d" % ports["SSL"], "security.protocol": "SSL",
                      "ssl.truststore.location": pki["ca"]},
        "denied": {"bootstrap.servers": "localhost:%d" % ports["SASLSSL"], "security.protocol": "SASL_SSL",
                   "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "denied", "sasl.password": SCRAM_PASSWORD,
                   "ssl.truststore.location": pki["ca"]},
    }
    out = {"eddy.forward.links": ",".join(LINKS)}
    for link, keys in per_link.items():
        out["eddy.forward.%s.topics" % link] = "%s_numbers" % link
        for k, v in dict(common, **keys).items():
            out["eddy.forward.%s.%s" % (link, k)] = v
    return out


class Rig:
    def __init__(self, tmp_path_factory):
        pki_dir = str(tmp_path_factory.mktemp("pki"))
        self.pki = make_pki(pki_dir)
        self.password_file = os.path.join(pki_dir, "late.password")
        with open(self.password_file, "w") as f:
            f.write(LATE_PASSWORD + "\n")
        self.kafka = SecuredKafka(self.pki, tmp_path_factory.mktemp("kafka"))
        # The failing links bootstrap through a TCP proxy that counts their
        # connection attempts (independently of eddy's own count).
        self.proxies = {"late": FaultProxy(upstream_port=self.kafka.secure_ports["SASLSSL"]).start(),
                        "untrusted": FaultProxy(upstream_port=self.kafka.secure_ports["SSL"]).start()}
        self.edge = eddy_fixture.Broker(
            overrides=link_keys(self.pki, self.kafka.secure_ports, self.proxies, self.password_file),
            tmp=tmp_path_factory.mktemp("edge"))

    def link(self, name):
        for link in ff.forward_status(self.edge)["links"]:
            if link["name"] == name:
                return link
        raise AssertionError("no link %s in eddy forward status" % name)

    def produce(self, program, link):
        topic = "%s_numbers" % link
        ff.create_eddy_topic(self.edge, topic, PARTITIONS)
        rc, last, err = ff.finish_producer(ff.produce_numbers(program, self.edge.bootstrap, topic, COUNT,
                                                              PARTITIONS))
        assert rc == 0, "librdkafka delivered every message to the edge: %s %s" % (last, err)
        return topic

    def wait_delivered(self, link, timeout=90):
        def done():
            parts = self.link(link)["partitions"]
            return len(parts) == PARTITIONS and sum(p["forwarded_messages"] for p in parts) >= COUNT
        eddy_fixture.wait_until(done, timeout, "link %s to forward %d messages" % (link, COUNT), interval=0.2)

    def wait_error(self, link, timeout=30):
        def failing():
            status = self.link(link)
            return status if status["state"] == "backing-off" and status["last_error"] else None
        return eddy_fixture.wait_until(failing, timeout, "link %s to back off with a reason" % link, interval=0.1)


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    r = Rig(tmp_path_factory)
    try:
        r.kafka.start()
        r.kafka.add_scram_user("gateway", SCRAM_PASSWORD)
        r.kafka.add_scram_user("late", "not-the-links-password")  # the link's password is wrong
        r.kafka.add_scram_user("denied", SCRAM_PASSWORD)
        # An ACL on denied_numbers: from now on only its principals may use it.
        r.kafka.allow("gateway", "denied_numbers", "Write")
        r.edge.start()
        yield r
        assert r.edge.alive(), "the edge still runs:\n" + r.edge.log_text()[-3000:]
    finally:
        r.edge.close()
        r.kafka.close()
        for proxy in r.proxies.values():
            proxy.close()


@pytest.mark.parametrize("link", ["scram", "plain", "tls", "mtls", "mtlsenc"])
def test_secured_link_delivers_exactly_once(rig, program, link):
    topic = rig.produce(program, link)
    rig.wait_delivered(link)
    status = rig.link(link)
    assert status["state"] == "connected" and status["last_error"] == "", status
    ff.assert_numbers(rig.kafka, topic, COUNT, PARTITIONS, label="central %s via %s" % (topic, link))
    expected = {"scram": "SASL_SSL SCRAM-SHA-512 as gateway", "plain": "SASL_PLAINTEXT PLAIN as gateway",
                "tls": "SSL", "mtls": "SSL", "mtlsenc": "SSL"}[link]
    assert status["security"] == expected, status


def attempts_over(rig, link, seconds):
    """(eddy's connects, TCP connections the proxy accepted) of link over
    the next seconds."""
    before = rig.link(link)["connects"], rig.proxies[link].connections
    time.sleep(seconds)
    return rig.link(link)["connects"] - before[0], rig.proxies[link].connections - before[1]


def test_wrong_password_backs_off_then_resumes_when_fixed_centrally(rig, program):
    status = rig.wait_error("late")
    assert "SASL_AUTHENTICATION_FAILED" in status["last_error"] or "uthentication failed" in status["last_error"], \
        status
    text = ff.forward_status(rig.edge, json_output=False)
    assert "security: SASL_SSL SCRAM-SHA-512 as late" in text and "last error:" in text, text
    # Backoff 100 ms doubling to 1 s (+-20%): at most ~6 attempts in 5 s once
    # at the cap; a tight loop would make hundreds. Still retrying: >= 2.
    connects, connections = attempts_over(rig, "late", 5)
    print("late:", status["last_error"], "; in 5 s: %d connects, %d TCP connections" % (connects, connections))
    assert 1 <= connects <= 8, "connect attempts in 5 s: %d" % connects
    assert 1 <= connections <= 8, "TCP connections in 5 s: %d" % connections
    rig.kafka.add_scram_user("late", LATE_PASSWORD)
    topic = rig.produce(program, "late")
    rig.wait_delivered("late")
    assert rig.link("late")["state"] == "connected"
    ff.assert_numbers(rig.kafka, topic, COUNT, PARTITIONS, label="central %s after the password was fixed" % topic)


def test_mechanism_not_enabled_backs_off(rig):
    status = rig.wait_error("mechanism")
    print("mechanism:", status["last_error"])
    assert "UNSUPPORTED_SASL_MECHANISM" in status["last_error"], status
    assert "SCRAM-SHA-512" in status["last_error"], "the mechanisms the broker offers: %s" % status


def test_untrusted_ca_backs_off_with_the_tls_reason(rig):
    status = rig.wait_error("untrusted")
    assert "TLS handshake with localhost:%d failed" % rig.proxies["untrusted"].port in status["last_error"], status
    assert "not correctly signed by the trusted CA" in status["last_error"], status
    connects, connections = attempts_over(rig, "untrusted", 5)
    print("untrusted:", status["last_error"], "; in 5 s: %d connects, %d TCP connections" % (connects, connections))
    assert 1 <= connects <= 8 and 1 <= connections <= 8, (connects, connections)


def test_hostname_mismatch_backs_off(rig):
    status = rig.wait_error("wrongname")
    print("wrongname:", status["last_error"])
    assert "TLS handshake with 127.0.0.1:%d failed" % rig.kafka.secure_ports["SSL"] in status["last_error"], status
    assert "does not match" in status["last_error"], status


def test_a_topic_kafkas_acls_refuse_pauses_then_resumes_once_allowed(rig, program):
    topic = rig.produce(program, "denied")

    def paused():
        parts = rig.link("denied")["partitions"]
        return parts if len(parts) == PARTITIONS and all(p["paused"] for p in parts) else None
    parts = eddy_fixture.wait_until(paused, 30, "denied_numbers to pause", interval=0.2)
    reason = parts[0]["paused"]
    assert "not authorized" in reason and topic in reason, "paused, naming the refusal: %r" % (reason,)
    assert sum(p["forwarded_messages"] for p in parts) == 0
    rig.kafka.allow("denied", topic, "Write", "Describe", "Create")
    rig.wait_delivered("denied")
    ff.assert_numbers(rig.kafka, topic, COUNT, PARTITIONS)


def test_no_password_in_log_or_status(rig):
    shown = rig.edge.log_text() + ff.forward_status(rig.edge, json_output=False) + \
        str(ff.forward_status(rig.edge))
    for secret in (SCRAM_PASSWORD, LATE_PASSWORD, PLAIN_PASSWORD, KEY_PASSWORD, "scram-Secret"):
        assert secret not in shown, "a password appears in the log or the status"


def serve(tmp_path, overrides):
    args = [os.environ["EDDY_BIN"], "serve", "--override", "log.dirs=" + str(tmp_path / "data")]
    for k, v in overrides.items():
        args += ["--override", "%s=%s" % (k, v)]
    return subprocess.run(args, capture_output=True, text=True, timeout=30)


def test_configuration_errors_exit_2(tmp_path):
    base = {"eddy.forward.links": "a", "eddy.forward.a.bootstrap.servers": "localhost:1"}
    missing = str(tmp_path / "missing.pem")
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("hello\n")
    cases = [
        ({"eddy.forward.a.security.protocol": "SSL"}, "eddy.forward.a.ssl.truststore.location"),
        ({"eddy.forward.a.security.protocol": "SSL", "eddy.forward.a.ssl.truststore.location": missing},
         missing),
        ({"eddy.forward.a.security.protocol": "SSL", "eddy.forward.a.ssl.truststore.location": str(not_pem)},
         "not a PEM file"),
        ({"eddy.forward.a.security.protocol": "SASL_PLAINTEXT"}, "sasl.jaas.config or"),
        ({"eddy.forward.a.security.protocol": "SASL_PLAINTEXT", "eddy.forward.a.sasl.username": "u",
          "eddy.forward.a.sasl.password.file": missing}, missing),
        ({"eddy.forward.a.security.protocol": "SASL_PLAINTEXT", "eddy.forward.a.sasl.mechanism": "SCRAM-SHA-256",
          "eddy.forward.a.sasl.jaas.config":
              "org.apache.kafka.common.security.plain.PlainLoginModule required username=u password=p;"},
         "takes org.apache.kafka.common.security.scram.ScramLoginModule"),
        ({"eddy.forward.a.security.protocol": "SASL_PLAINTEXT",
          "eddy.forward.a.sasl.jaas.config":
              "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p"},
         "not closed"),
        ({"eddy.forward.a.security.protocol": "SASL_PLAINTEXT", "eddy.forward.a.sasl.mechanism": "GSSAPI"},
         "eddy.forward.a.sasl.mechanism"),
        ({"eddy.forward.a.sasl.username": "u"}, "only used with security.protocol SASL_PLAINTEXT or SASL_SSL"),
        ({"eddy.forward.a.security.protocol": "SASL_PLAINTEXT", "eddy.forward.a.ssl.truststore.location": missing},
         "only used with security.protocol SSL or SASL_SSL"),
    ]
    for overrides, expected in cases:
        r = serve(tmp_path, dict(base, **overrides))
        assert r.returncode == 2 and expected in r.stderr, "%s -> exit 2 naming %r: %s" % (
            overrides, expected, (r.returncode, r.stderr[-1500:]))
        assert "password=p" not in r.stderr and "=\"p" not in r.stderr, "no password in the message"
