#!/usr/bin/python3
"""TLS on the listeners, measured against its peers in one run (issue 15):

  handshakes  full TLS 1.2 handshakes per second (`openssl s_time -new`, a
              new session every connection: Eddy keeps no session cache), with
              an RSA-2048 and an ECDSA P-256 server certificate, against Eddy,
              Apache Kafka 4.x and `openssl s_server` (OpenSSL's own server on
              the same certificate: what this machine's fastest TLS stack
              does), plus each server's CPU per handshake;
  consume     a topic of 1 KiB messages read from the start by the same
              librdkafka client (tests/bench/rdkafka_bench.c) over PLAINTEXT
              and over SSL, from Eddy and from Kafka: MB/s and broker CPU
              seconds per GB. On PLAINTEXT both brokers sendfile; on TLS both
              lose zero copy (Eddy preads into the record it encrypts).

  /usr/bin/python3 tests/bench/tls_bench.py --build BUILD_DIR [--out DIR]
      [--runs 3] [--consume-mib 256] [--handshake-seconds 5] [--no-kafka]

`make bench` runs it after compare_bench.py; the report is
BUILD/bench-report/tls.md (and tls.json). Cipher suites are fixed on the
client side, so every server negotiates the same one:
ECDHE-RSA-AES128-GCM-SHA256 and ECDHE-ECDSA-AES128-GCM-SHA256.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_measure import ProcessMeter, measure, run_client  # noqa: E402
from bench_systems import EddySystem, _BenchKafkaCluster  # noqa: E402
import eddy_fixture  # noqa: E402  (bench_systems put tests/integration on the path)
import kafka_fixture  # noqa: E402

KEY_TYPES = {
    # name: (openssl req -newkey argument and options, the client's cipher suite)
    "RSA-2048": (["-newkey", "rsa:2048"], "ECDHE-RSA-AES128-GCM-SHA256"),
    "ECDSA P-256": (["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"], "ECDHE-ECDSA-AES128-GCM-SHA256"),
}
KAFKA_SUITES = {"RSA-2048": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                "ECDSA P-256": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}
LISTENER_OF = {"RSA-2048": "SSL", "ECDSA P-256": "SSLEC"}
MESSAGE_SIZE = 1024


def openssl(args, cwd):
    proc = subprocess.run(["openssl"] + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        raise RuntimeError("openssl %s: %s" % (" ".join(args), proc.stdout.decode(errors="replace")))


def make_pki(d):
    """A CA and, per key type, a server certificate for 127.0.0.1 whose
    key + chain PEM (what ssl.keystore.location takes, Eddy's and Kafka's
    alike) is d/<listener>.pem. Returns {key type: {crt, key, pem}} and the
    CA file."""
    openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
             "-subj", "/CN=Eddy Bench CA"], d)
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    certs = {}
    for kind, (newkey, _) in KEY_TYPES.items():
        name = LISTENER_OF[kind].lower()
        openssl(["req"] + newkey + ["-nodes", "-keyout", name + ".key", "-out", name + ".csr",
                                    "-subj", "/CN=localhost"], d)
        openssl(["x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", name + ".crt", "-days", "2", "-extfile", "san.ext"], d)
        pem = os.path.join(d, name + ".pem")
        with open(pem, "w") as out:
            for part in (name + ".crt", name + ".key"):
                with open(os.path.join(d, part)) as f:
                    out.write(f.read())
        certs[kind] = {"crt": os.path.join(d, name + ".crt"), "key": os.path.join(d, name + ".key"), "pem": pem}
    return certs, os.path.join(d, "ca.pem")


def handshake_rate(port, ca, cipher, seconds):
    """(handshakes per second, handshakes) of `openssl s_time -new` against
    127.0.0.1:port for `seconds`: one connection at a time, a full TLS 1.2
    handshake each, then a close."""
    proc = subprocess.run(["openssl", "s_time", "-connect", "127.0.0.1:%d" % port, "-new", "-time", str(seconds),
                           "-tls1_2", "-cipher", cipher, "-CAfile", ca, "-verify", "1"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=seconds * 4 + 30)
    m = re.search(r"(\d+) connections in (\d+) real seconds", proc.stdout)
    if proc.returncode != 0 or not m or int(m.group(1)) == 0:
        raise RuntimeError("openssl s_time against port %d: %s" % (port, proc.stdout[-800:]))
    count, real = int(m.group(1)), int(m.group(2))
    return count / max(real, 1), count


def measure_handshakes(label, port, ca, cipher, meter, opts, log):
    """Median over opts.runs of handshakes/s, with the server's CPU ms per
    handshake when its process is metered."""
    rates, cpu_ms = [], []
    for _ in range(opts.runs):
        cpu0 = meter.cpu_s() if meter else None
        rate, count = handshake_rate(port, ca, cipher, opts.handshake_seconds)
        rates.append(rate)
        if meter:
            cpu_ms.append(1000.0 * (meter.cpu_s() - cpu0) / count)
    rates.sort()
    cpu_ms.sort()
    result = {"handshakes_per_s": rates[len(rates) // 2],
              "server_cpu_ms_per_handshake": cpu_ms[len(cpu_ms) // 2] if cpu_ms else None}
    log("%-28s %8.1f handshakes/s  %s ms CPU each" % (label, result["handshakes_per_s"],
                                                      "%.2f" % result["server_cpu_ms_per_handshake"]
                                                      if cpu_ms else "-"))
    return result


class OpensslServer:
    """`openssl s_server` on the certificate: the peer for handshakes."""

    def __init__(self, cert):
        self.port = kafka_fixture.free_port()
        self.proc = subprocess.Popen(["openssl", "s_server", "-accept", "127.0.0.1:%d" % self.port,
                                      "-cert", cert["crt"], "-key", cert["key"], "-quiet", "-no_ticket"],
                                     stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        eddy_fixture.wait_until(lambda: eddy_fixture.port_accepts(self.port), 10, "openssl s_server to listen")
        self.meter = ProcessMeter(self.proc.pid)

    def close(self):
        self.proc.kill()
        self.proc.wait()


class TlsKafkaCluster(_BenchKafkaCluster):
    """The bench's one Kafka node with two more client listeners, SSL (the
    RSA certificate) and SSLEC (the ECDSA one), next to PLAINTEXT."""

    def __init__(self, certs, work_dir):
        saved = tempfile.tempdir
        tempfile.tempdir = work_dir
        try:
            super().__init__(1, heap_mb=1024)
        finally:
            tempfile.tempdir = saved
        self.tls_ports = {kind: kafka_fixture.free_port() for kind in KEY_TYPES}
        plain, ctrl = self.ports[1], self.controller_ports[1]
        names = {kind: LISTENER_OF[kind] for kind in KEY_TYPES}
        tls = ",".join("%s://127.0.0.1:%d" % (names[k], self.tls_ports[k]) for k in KEY_TYPES)
        self.extra.update({
            "listeners": "PLAINTEXT://127.0.0.1:%d,%s,CONTROLLER://127.0.0.1:%d" % (plain, tls, ctrl),
            "advertised.listeners": "PLAINTEXT://127.0.0.1:%d,%s" % (plain, tls),
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT," +
                                              ",".join("%s:SSL" % names[k] for k in KEY_TYPES),
        })
        for kind in KEY_TYPES:
            prefix = "listener.name.%s." % names[kind].lower()
            self.extra[prefix + "ssl.keystore.type"] = "PEM"
            self.extra[prefix + "ssl.keystore.location"] = certs[kind]["pem"]
            # TLS 1.2 and one suite, as Eddy on Debian's mbedTLS 2.28 offers
            # (the JVM would otherwise choose TLS 1.3 with AES-256).
            self.extra[prefix + "ssl.enabled.protocols"] = "TLSv1.2"
            self.extra[prefix + "ssl.cipher.suites"] = KAFKA_SUITES[kind]
        self._write_config(1)


def eddy_tls_overrides(certs):
    ports = {kind: kafka_fixture.free_port() for kind in KEY_TYPES}
    tls = ",".join("%s://127.0.0.1:%d" % (LISTENER_OF[k], ports[k]) for k in KEY_TYPES)
    overrides = {"listeners": "PLAINTEXT://127.0.0.1:0," + tls,
                 "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT," +
                                                   ",".join("%s:SSL" % LISTENER_OF[k] for k in KEY_TYPES)}
    for kind in KEY_TYPES:
        overrides["listener.name.%s.ssl.keystore.location" % LISTENER_OF[kind].lower()] = certs[kind]["pem"]
    return overrides, ports


def consume_figures(label, tool, bootstrap, topic, count, ssl_config, meter, opts, log):
    """MB/s and broker CPU per GB of reading topic from the start, over
    PLAINTEXT (ssl_config None) or SSL (a librdkafka properties file)."""

    def run_once(_index, _warmup):
        env_before = os.environ.get("RDKAFKA_BENCH_CONFIG")
        os.environ["RDKAFKA_BENCH_CONFIG"] = ssl_config or ""
        try:
            return run_client([tool, "consume", bootstrap, topic, 1, count])
        finally:
            if env_before is None:
                del os.environ["RDKAFKA_BENCH_CONFIG"]
            else:
                os.environ["RDKAFKA_BENCH_CONFIG"] = env_before

    series = measure(label, run_once, opts.runs, meter=meter, log=log)
    m = series.medians()
    if series.errors():
        raise RuntimeError("%s: %s" % (label, series.errors()[0]))
    log("%-28s %8.0f MB/s  broker %.2f s/GB" % (label, m["mb_per_s"], m["broker_cpu_s_per_gb"]))
    return {"mb_per_s": m["mb_per_s"], "broker_cpu_s_per_gb": m["broker_cpu_s_per_gb"]}


def write_ssl_config(d, ca):
    path = os.path.join(d, "rdkafka-ssl.properties")
    with open(path, "w") as f:
        f.write("security.protocol=ssl\nssl.ca.location=%s\nssl.cipher.suites=%s\n" % (
            ca, KEY_TYPES["RSA-2048"][1]))
    return path


def run_system(name, plain_bootstrap, tls_ports, meter, certs, ca, ssl_config, tool, opts, log, produce):
    """Handshakes on each TLS listener, then the consume pair. produce()
    fills the topic first (over PLAINTEXT, outside the measurement)."""
    result = {"handshakes": {}, "consume": {}}
    for kind, (_, cipher) in KEY_TYPES.items():
        result["handshakes"][kind] = measure_handshakes("%s %s" % (name, kind), tls_ports[kind], ca, cipher, meter,
                                                        opts, log)
    count = (opts.consume_mib << 20) // MESSAGE_SIZE
    produce(count)
    result["consume"]["PLAINTEXT"] = consume_figures("%s consume PLAINTEXT" % name, tool, plain_bootstrap, "tls-bench",
                                                     count, None, meter, opts, log)
    result["consume"]["SSL"] = consume_figures("%s consume SSL" % name, tool,
                                               "127.0.0.1:%d" % tls_ports["RSA-2048"], "tls-bench", count,
                                               ssl_config, meter, opts, log)
    return result


def ratio(a, b):
    return "%.2f" % (a / b) if a and b else "-"


def report(results, opts):
    e, k, o = results["Eddy"], results.get("Kafka"), results["openssl s_server"]
    lines = ["# TLS: Eddy against Apache Kafka and OpenSSL", "",
             "`/usr/bin/python3 tests/bench/tls_bench.py --build BUILD` (medians of %d runs; handshakes over %d s "
             "each; consume %d MiB of 1 KiB messages)." % (opts.runs, opts.handshake_seconds, opts.consume_mib), "",
             "## Full TLS 1.2 handshakes per second (`openssl s_time -new`, one connection at a time)", "",
             "| certificate | Eddy | server CPU ms | Kafka | server CPU ms | s_server | Eddy/Kafka | Eddy/s_server |",
             "|---|---|---|---|---|---|---|---|"]
    for kind in KEY_TYPES:
        eh, oh = e["handshakes"][kind], o[kind]
        kh = k["handshakes"][kind] if k else {}
        lines.append("| %s | %.0f | %.2f | %s | %s | %.0f | %s | %s |" % (
            kind, eh["handshakes_per_s"], eh["server_cpu_ms_per_handshake"],
            "%.0f" % kh["handshakes_per_s"] if kh else "-",
            "%.2f" % kh["server_cpu_ms_per_handshake"] if kh else "-", oh["handshakes_per_s"],
            ratio(eh["handshakes_per_s"], kh.get("handshakes_per_s")),
            ratio(eh["handshakes_per_s"], oh["handshakes_per_s"])))
    lines += ["", "## Consume from the start, 1 KiB messages (rdkafka_bench consume)", "",
              "| broker | PLAINTEXT MB/s | SSL MB/s | SSL/PLAINTEXT | PLAINTEXT broker s/GB | SSL broker s/GB |",
              "|---|---|---|---|---|---|"]
    for name in ("Eddy", "Kafka"):
        if name not in results:
            continue
        c = results[name]["consume"]
        lines.append("| %s | %.0f | %.0f | %s | %.2f | %.2f |" % (
            name, c["PLAINTEXT"]["mb_per_s"], c["SSL"]["mb_per_s"],
            ratio(c["SSL"]["mb_per_s"], c["PLAINTEXT"]["mb_per_s"]),
            c["PLAINTEXT"]["broker_cpu_s_per_gb"], c["SSL"]["broker_cpu_s_per_gb"]))
    if k:
        lines += ["", "Eddy/Kafka on SSL: %s MB/s, %s broker CPU per GB." % (
            ratio(e["consume"]["SSL"]["mb_per_s"], k["consume"]["SSL"]["mb_per_s"]),
            ratio(e["consume"]["SSL"]["broker_cpu_s_per_gb"], k["consume"]["SSL"]["broker_cpu_s_per_gb"]))]
    return "\n".join(lines) + "\n"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", required=True)
    p.add_argument("--out", help="report directory (default BUILD/bench-report)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--consume-mib", type=int, default=256)
    p.add_argument("--handshake-seconds", type=int, default=5)
    p.add_argument("--no-kafka", action="store_true", help="leave Apache Kafka out")
    o = p.parse_args()
    o.build = os.path.abspath(o.build)
    o.out = os.path.abspath(o.out or os.path.join(o.build, "bench-report"))
    return o


def main():
    opts = parse_args()
    source = os.path.abspath(os.path.join(HERE, "..", ".."))
    tool = os.path.join(opts.build, "tests", "bench", "rdkafka_bench")
    eddy_bin = os.path.join(opts.build, "eddy")
    for path in (tool, eddy_bin):
        if not os.access(path, os.X_OK):
            print("tls_bench: missing %s (make bench builds it)" % path)
            return 2
    os.makedirs(opts.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="tls-bench-", dir=opts.build)
    log = lambda line: print(line, flush=True)  # noqa: E731
    results = {}
    try:
        certs, ca = make_pki(work)
        ssl_config = write_ssl_config(work, ca)
        results["openssl s_server"] = {}
        for kind, (_, cipher) in KEY_TYPES.items():
            server = OpensslServer(certs[kind])
            try:
                results["openssl s_server"][kind] = measure_handshakes("openssl s_server %s" % kind, server.port, ca,
                                                                       cipher, server.meter, opts, log)
            finally:
                server.close()
        overrides, eddy_ports = eddy_tls_overrides(certs)
        eddy = EddySystem(eddy_bin, source, tool, work, retention_bytes=(opts.consume_mib + 64) << 20,
                          overrides=overrides)
        eddy.start()
        try:
            results["Eddy"] = run_system(
                "Eddy", eddy.bootstrap, eddy_ports, eddy.meter, certs, ca, ssl_config, tool, opts, log,
                lambda count: (eddy.create("tls-bench", 1, "acks1"),
                               run_client([tool, "produce", eddy.bootstrap, "tls-bench", count, MESSAGE_SIZE, "1"])))
        finally:
            eddy.stop()
        if not opts.no_kafka:
            kafka = TlsKafkaCluster(certs, work)
            kafka.start(timeout=180)
            try:
                meter = ProcessMeter(kafka.procs[1].pid)
                results["Kafka"] = run_system(
                    "Kafka", kafka.bootstrap, kafka.tls_ports, meter, certs, ca, ssl_config, tool, opts, log,
                    lambda count: (run_client([tool, "create", kafka.bootstrap, "tls-bench", 1]),
                                   run_client([tool, "produce", kafka.bootstrap, "tls-bench", count, MESSAGE_SIZE,
                                               "1"])))
            finally:
                kafka.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = report(results, opts)
    with open(os.path.join(opts.out, "tls.md"), "w") as f:
        f.write(text)
    with open(os.path.join(opts.out, "tls.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
