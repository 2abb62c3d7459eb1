"""Runs rdkafka_roundtrip (librdkafka: snappy then zstd, acks=all, delivery
reports, rd_kafka_assign consumer) against a fresh Eddy; the C program's
checks count here too. Eddy must not have had to close any of librdkafka's
connections for a bad or unsupported request."""

import subprocess
import sys

import eddy_fixture

COUNT = 20000


def body(broker, checks):
    program = sys.argv[1]
    result = subprocess.run([program, broker.bootstrap, str(COUNT)], capture_output=True, text=True, timeout=240)
    print(result.stdout, end="")
    if result.stderr:
        print("rdkafka_roundtrip stderr:\n" + result.stderr[-3000:])
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    checks.check("rdkafka_roundtrip exit code 0 (%s)" % summary, result.returncode == 0, result.returncode)
    closed = [line for line in broker.log_text().splitlines() if "closing connection" in line]
    checks.equal("Eddy closed no librdkafka connection", closed, [])


if __name__ == "__main__":
    eddy_fixture.run_test(body)
