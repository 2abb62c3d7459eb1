"""What the hardware allows, measured in the same run as the brokers, for
compare_bench.py: fio on the data directory's filesystem (sequential write
to the page cache, to the disk (final fsync timed), with an fdatasync per
1 MiB, direct sequential read, fdatasync latency of a 1 KiB write), iperf3 over loopback TCP, and a raw
sendfile(2) loop of segment files to a loopback socket (broker_bench.py).

Every function returns a dict of values as bench_measure.measure expects:
mb_per_s (10^6 bytes per second) and bytes, or latency percentiles in us.
"""

import json
import os
import socket
import subprocess
import time

from bench_measure import ClientFailed, run_client


def fio(directory, name, args, timeout=300):
    """Runs one fio job in directory; returns its JSON job record. The file is
    removed afterwards (--unlink=1)."""
    os.makedirs(directory, exist_ok=True)
    argv = ["fio", "--name=" + name, "--directory=" + directory, "--ioengine=psync", "--unlink=1",
            "--output-format=json"] + args
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise ClientFailed("fio %s failed: %s" % (name, result.stderr.strip()[-600:]), {})
    text = result.stdout
    return json.loads(text[text.index("{"):])["jobs"][0]


def _throughput(job, kind):
    side = job[kind]
    seconds = side["runtime"] / 1000.0
    return {"bytes": float(side["io_bytes"]), "seconds": seconds, "mb_per_s": side["bw_bytes"] / 1e6}


def fio_write(directory, mib):
    """Sequential 1 MiB writes into the page cache, no sync."""
    return _throughput(fio(directory, "write", ["--rw=write", "--bs=1M", "--size=%dM" % mib]), "write")


def fio_write_end_fsync(directory, mib):
    """Sequential 1 MiB writes, one fsync at the end, inside the timing: the
    rate at which bytes reach the disk, the most a durable log can sustain
    however it groups its syncs."""
    return _throughput(fio(directory, "write-end-fsync", ["--rw=write", "--bs=1M", "--size=%dM" % mib,
                                                          "--end_fsync=1"]), "write")


def fio_write_fdatasync(directory, mib):
    """Sequential 1 MiB writes, fdatasync after each: the most a durable
    (synced before acked) sequential log can take with 1 MiB of group commit."""
    return _throughput(fio(directory, "write-sync", ["--rw=write", "--bs=1M", "--size=%dM" % mib, "--fdatasync=1"]),
                       "write")


def fio_read_direct(directory, mib):
    """Sequential 1 MiB reads with O_DIRECT: the device, not the page cache."""
    return _throughput(fio(directory, "read", ["--rw=read", "--bs=1M", "--size=%dM" % mib, "--direct=1"]), "read")


def fio_sync_latency(directory, seconds, pause_us=0):
    """1 KiB sequential writes, fdatasync after each, for `seconds`: the
    fdatasync latency percentiles are the floor of a disk-durable ack.
    pause_us: fio's thinktime between one write's sync and the next write,
    so that syncs come at about a fixed rate's pace (an idle disk and CPU
    between them take longer to answer than back-to-back ones)."""
    pause = ["--thinktime=%d" % pause_us] if pause_us > 0 else []
    job = fio(directory, "sync-latency", ["--rw=write", "--bs=1k", "--size=64M", "--fdatasync=1", "--time_based",
                                          "--runtime=%d" % seconds, "--percentile_list=50:99:99.9"] + pause)
    pct = job["sync"]["lat_ns"]["percentile"]

    def us(key):
        return pct[key] / 1000.0 if key in pct else None

    return {"p50_us": us("50.000000"), "p99_us": us("99.000000"), "p999_us": us("99.900000"),
            "max_us": job["sync"]["lat_ns"]["max"] / 1000.0, "iops": job["write"]["iops"]}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_listening(port):
    """True when /proc/net/tcp{,6} shows a listening socket on port (checked
    without connecting: iperf3 -1 would take a probe for its one client)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                lines = f.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False


def iperf3_loopback(seconds):
    """One TCP stream over loopback for `seconds` (client and server share
    the machine's cores, as a broker and its clients do)."""
    port = free_port()
    server = subprocess.Popen(["iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not port_listening(port):
            if time.monotonic() > deadline or server.poll() is not None:
                raise ClientFailed("iperf3 server did not start", {})
            time.sleep(0.02)
        result = subprocess.run(["iperf3", "-c", "127.0.0.1", "-p", str(port), "-t", str(seconds), "-J"],
                                capture_output=True, text=True, timeout=seconds + 30)
        if result.returncode != 0:
            raise ClientFailed("iperf3 failed: %s" % (result.stdout + result.stderr)[-600:], {})
        received = json.loads(result.stdout)["end"]["sum_received"]
        return {"bytes": float(received["bytes"]), "seconds": received["seconds"],
                "mb_per_s": received["bits_per_second"] / 8 / 1e6}
    finally:
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def sendfile_loopback(paths):
    """sendfile(2) of the files to a loopback TCP socket whose reader only
    counts: the zero-copy ceiling for serving those files to a consumer."""
    from broker_bench import sendfile_peer
    start = time.monotonic()
    nbytes, mib_s = sendfile_peer(paths)
    seconds = time.monotonic() - start
    return {"bytes": float(nbytes), "seconds": seconds, "mb_per_s": mib_s * 2 ** 20 / 1e6}


def _copy_floor(argv):
    values = run_client(argv)
    values["floor_cpu_s_per_gb"] = values["cpu_s"] / (values["bytes"] / 1e9)
    return values


def copy_floor_write(tool, directory, mib, sync=False):
    """copy_floor write: MiB received from loopback TCP and pwritten into a
    preallocated file; floor_cpu_s_per_gb is the receiving thread's CPU per
    GB, the least a broker's produce path can cost here. sync: write-sync,
    an fdatasync after every MiB too (the floor of a path that makes every
    batch durable)."""
    os.makedirs(directory, exist_ok=True)
    return _copy_floor([tool, "write-sync" if sync else "write", directory, mib])


def sync_floor(tool, directory, rate, seconds, size):
    """sync_floor.c: SIZE-byte records written at RATE a second for SECONDS
    into a preallocated file, a group-commit fdatasync thread beside the
    writer; e2e_p*_us from each record's write to the end of the sync that
    covers it (open loop: a slow sync delays the records behind it, which
    fio's paced figure does not count), sync_p*_us of the syncs alone."""
    os.makedirs(directory, exist_ok=True)
    return run_client([tool, directory, rate, seconds, size], timeout=seconds + 120)


def copy_floor_sendfile(tool, paths):
    """copy_floor sendfile: the files sendfile(2)d to loopback TCP;
    floor_cpu_s_per_gb is the sending thread's CPU per GB, the least a
    broker's consume path can cost here."""
    return _copy_floor([tool, "sendfile"] + list(paths))
