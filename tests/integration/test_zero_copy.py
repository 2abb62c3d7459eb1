"""Zero copy: a plaintext fetch of a large topic leaves the broker through
sendfile(2). The topic (about 24 MiB over several segment files) is written,
the broker restarted under `strace -f`, and everything fetched back with raw
Fetch requests; then, from strace's record of the broker's system calls:
  - the bytes sendfile() moved from segment files to the fetching client's
    socket cover every record byte it received;
  - the bytes the broker wrote to that socket by ordinary writes (write,
    writev, sendmsg, sendto) are only response headers, a small fraction;
  - the broker did not read the fetched data into memory (read, pread64,
    preadv of segment files) once it served the client (reads when the log
    is opened at startup do not count).
The fetched bytes are compared with what was produced. kcat then reads the
topic too (librdkafka's Fetch version), and its bytes must also have gone
out through sendfile."""

import collections
import os
import re
import shutil
import subprocess

import pytest
from kafka.protocol.admin import CreateTopicsResponse

import kafka_wire as w

TOPIC = "zero-copy"
BATCHES = 48
RECORD_BYTES = 512 * 1024

TRACED = "sendfile,write,writev,sendmsg,sendto,read,readv,recvmsg,recvfrom,pread64,preadv,preadv2"
CALL = re.compile(r"^(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+)")


def parse_strace(path):
    """Yields (syscall, args, result) of completed calls, joining strace's
    '<unfinished ...>' and '<... resumed>' halves per thread."""
    pending = {}
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^(\d+)\s+(.*) <unfinished \.\.\.>$", line)
            if m:
                pending[m.group(1)] = m.group(2)
                continue
            m = re.match(r"^(\d+)\s+<\.\.\. \w+ resumed>(.*)$", line)
            if m:
                line = "%s %s%s" % (m.group(1), pending.pop(m.group(1), ""), m.group(2))
            m = CALL.match(line)
            if m:
                yield m.group(2), m.group(3), int(m.group(4))


def fd_path(arg):
    """The decoration strace -yy puts on a file descriptor argument."""
    m = re.match(r"^\d+<(.*?)>(?:,|$)", arg.strip())
    return m.group(1) if m else ""


@pytest.fixture(scope="module")
def strace():
    """strace, or the whole file skips (exit code 77: ctest's SKIP_RETURN_CODE)."""
    path = shutil.which("strace")
    if path is None:
        pytest.skip("strace is not installed (scripts/install-deps.sh host installs it)")
    probe = subprocess.run([path, "-f", "--seccomp-bpf", "-o", os.devnull, "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("strace cannot trace here (ptrace not permitted?): %s" % probe.stderr.strip())
    return path


@pytest.fixture(scope="module")
def produced(eddy, strace):
    """The topic, written without tracing: the produced batches."""
    produced = []
    with w.Connection(eddy.port) as conn:
        r = conn.request(19, 1, w.create_topics_v1(TOPIC, 1), response_class=CreateTopicsResponse[1])
        assert r.topic_errors[0][1] == 0, "create topic"
        for j in range(BATCHES):
            value = os.urandom(RECORD_BYTES)
            batch = w.record_batch([(b"zc-%d" % j, value, [])])
            error_code, offset = w.produce(conn, TOPIC, 0, batch, acks=1)
            assert (error_code, offset) == (0, j), "produce batch %d" % j
            produced.append(batch)
    return produced


@pytest.fixture(scope="module")
def traced(eddy, strace, produced):
    """Restarts the broker under strace, fetches everything (raw Fetch and
    kcat), stops it: {fetched, kcat, client_port, trace}. The broker runs
    again, untraced, afterwards (for the fixture's final checks)."""
    assert eddy.stop() == 0, "SIGTERM exit code"
    trace = os.path.join(eddy.tmp, "strace.out")
    eddy.wrapper = [strace, "-f", "--seccomp-bpf", "-yy", "-e", "trace=" + TRACED, "-e", "signal=none", "-o", trace]
    # LeakSanitizer (EDDY_SANITIZE builds) cannot run under ptrace.
    eddy.env = {"ASAN_OPTIONS": ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "detect_leaks=0"]))}
    eddy.start()
    with w.Connection(eddy.port) as conn:
        client_port = conn.sock.getsockname()[1]
        fetched = w.fetch_all(conn, TOPIC, 0, max_bytes=1 << 20)
    # A real client too: kcat (librdkafka's Fetch v11, a flexible-era version).
    kcat = subprocess.run(["kcat", "-b", eddy.bootstrap, "-C", "-t", TOPIC, "-p", "0", "-o", "beginning", "-e",
                           "-f", "%o %S\n"], capture_output=True, text=True, timeout=120)
    rc = eddy.stop()
    eddy.wrapper = []
    eddy.env = {}
    eddy.start()
    assert rc == 0, "traced broker stops cleanly (strace's exit code is eddy's)"
    return {"fetched": fetched, "kcat": kcat, "client_port": client_port, "trace": trace}


@pytest.fixture(scope="module")
def seen(traced):
    """What strace saw: (bytes by kind, calls by kind, largest segment read while serving)."""
    client_tag = "127.0.0.1:%d]" % traced["client_port"]
    bytes_by = collections.Counter()
    calls_by = collections.Counter()
    largest_read_while_serving = 0
    serving = False  # set at the broker's first system call on the client's socket
    for name, args, result in parse_strace(traced["trace"]):
        first = fd_path(args)
        serving = serving or client_tag in first
        if name == "sendfile":
            src = fd_path(args.split(",", 1)[1]) if "," in args else ""
            if client_tag in first and src.endswith(".log") and result > 0:
                bytes_by["sendfile to client"] += result
                calls_by["sendfile to client"] += 1
            elif first.startswith("TCP:") and src.endswith(".log") and result > 0:
                bytes_by["sendfile to kcat"] += result
        elif name in ("write", "writev", "sendmsg", "sendto"):
            if client_tag in first and result > 0:
                bytes_by["writes to client"] += result
        elif name in ("read", "readv", "pread64", "preadv", "preadv2"):
            if first.endswith(".log") and result > 0:
                # Opening the log at startup (recovery, index) may read it.
                phase = "segment reads while serving" if serving else "segment reads at startup"
                bytes_by[phase] += result
                calls_by[phase] += 1
                largest_read_while_serving = max(largest_read_while_serving, result if serving else 0)
    print("strace totals: %s; calls: %s" % (dict(bytes_by), dict(calls_by)))
    return bytes_by, calls_by, largest_read_while_serving


def received_bytes(traced):
    return sum(len(b[2]) for b in traced["fetched"])


def test_topic_spans_several_segments(eddy, produced):
    segments = [f for f in os.listdir(os.path.join(eddy.data_dir, TOPIC + "-0")) if f.endswith(".log")]
    assert len(segments) >= 2, "the topic spans several segment files: %s" % segments


def test_fetched_batches_are_the_produced_ones(traced, produced):
    same = [b"\0" * 8 + b[2][8:12] + b"\0" * 4 + b[2][16:] for b in traced["fetched"]] == produced
    assert same, "fetched batches are the produced ones, byte for byte (%d bytes)" % received_bytes(traced)


def test_kcat_reads_every_record(traced):
    kcat_rows = [line.split() for line in traced["kcat"].stdout.splitlines()]
    assert kcat_rows == [[str(j), str(RECORD_BYTES)] for j in range(BATCHES)], "kcat reads every record with its size"


def test_sendfile_moved_every_fetched_byte(traced, seen):
    bytes_by, calls_by, _largest = seen
    received = received_bytes(traced)
    assert received > 0 and bytes_by["sendfile to client"] >= received, \
        "sendfile moved every fetched record byte from segment files to the client socket (%d >= %d in %d calls)" \
        % (bytes_by["sendfile to client"], received, calls_by["sendfile to client"])
    assert bytes_by["sendfile to kcat"] >= BATCHES * RECORD_BYTES, \
        "kcat's fetches went out through sendfile too (%d bytes)" % bytes_by["sendfile to kcat"]


def test_writes_carry_only_headers(traced, seen):
    bytes_by, _calls, _largest = seen
    assert bytes_by["writes to client"] < max(64 * 1024, received_bytes(traced) // 50), \
        "ordinary writes to the client carried only headers (%d bytes)" % bytes_by["writes to client"]


def test_fetched_data_not_read_into_memory(traced, seen):
    """Locating batches reads a few headers per fetch (one small pread);
    copying the data would read every byte."""
    bytes_by, calls_by, largest = seen
    assert bytes_by["segment reads while serving"] < received_bytes(traced) // 10 and largest <= 65536, \
        "the broker did not read the fetched data into memory (%d bytes read from segments in %d calls, largest %d)" \
        % (bytes_by["segment reads while serving"], calls_by["segment reads while serving"], largest)
