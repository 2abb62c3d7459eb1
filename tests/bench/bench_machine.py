"""Facts about the machine a comparison ran on, for the report: CPU model,
cores, memory, kernel, the filesystem of the data directories, and the
versions of everything measured (Kafka's and the JVM's included)."""

import os
import platform
import subprocess


def _first_line(argv):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unavailable"
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else "unavailable"


def _cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _mem_total_gib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 2 ** 20
    return 0.0


def _filesystem(path):
    """(device, type, mount point, options) of the mount holding path."""
    path = os.path.realpath(path)
    best = None
    with open("/proc/mounts") as f:
        for line in f:
            dev, mnt, fstype, opts = line.split()[:4]
            if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and (best is None or len(mnt) > len(best[2])):
                best = (dev, fstype, mnt, opts)
    return best or ("?", "?", "?", "?")


def _debian_version():
    try:
        with open("/etc/debian_version") as f:
            return "Debian " + f.read().strip()
    except OSError:
        return platform.platform()


def facts(work_dir, eddy_version, nats_version=None, kafka_version=None, java_version=None):
    dev, fstype, mnt, opts = _filesystem(work_dir)
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": round(_mem_total_gib(), 1),
        "kernel": platform.release(),
        "os": _debian_version(),
        "filesystem": "%s on %s (%s, mounted at %s, %s)" % (fstype, dev, work_dir, mnt, opts),
        "eddy": eddy_version,
        "kafka": kafka_version or "not run",
        "java": java_version or "not used",
        "nats_server": nats_version or "not run",
        "librdkafka": _first_line(["pkg-config", "--modversion", "rdkafka"]),
        "libnats": _first_line(["pkg-config", "--modversion", "libnats"]),
        "fio": _first_line(["fio", "--version"]),
        "iperf3": _first_line(["iperf3", "--version"]),
    }


def facts_markdown(f):
    java_client = ""
    if f.get("kafka", "not run") != "not run":
        java_client = ", kafka-clients %s (Java, kafka-producer-perf-test)" % f["kafka"].split()[-1]
    rows = [("CPU", "%s, %d cores" % (f["cpu"], f["cores"])), ("memory", "%.1f GiB" % f["memory_gib"]),
            ("kernel", f["kernel"]), ("OS", f["os"]), ("filesystem", f["filesystem"]), ("Eddy", f["eddy"]),
            ("Kafka", f.get("kafka", "not run")), ("Java", f.get("java", "not used")),
            ("NATS", f["nats_server"]),
            ("clients", "librdkafka %s, libnats %s%s" % (f["librdkafka"], f["libnats"], java_client)),
            ("tools", "%s, %s" % (f["fio"], f["iperf3"]))]
    return "| | |\n|---|---|\n" + "".join("| %s | %s |\n" % r for r in rows)
