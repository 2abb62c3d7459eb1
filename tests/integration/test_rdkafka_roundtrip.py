"""Runs rdkafka_roundtrip (librdkafka: snappy then zstd, acks=all, delivery
reports, rd_kafka_assign consumer) against a fresh Eddy; the C program's
checks count here too. Eddy must not have had to close any of librdkafka's
connections for a bad or unsupported request."""

import subprocess

import eddy_fixture


COUNT = 20000


def test_rdkafka_roundtrip(eddy, program):
    result = subprocess.run([program, eddy.bootstrap, str(COUNT)], capture_output=True, text=True, timeout=240)
    print(result.stdout, end="")
    if result.stderr:
        print("rdkafka_roundtrip stderr:\n" + result.stderr[-3000:])
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, "rdkafka_roundtrip exit code (%s)" % summary
    eddy_fixture.assert_no_closed_connection(eddy)
