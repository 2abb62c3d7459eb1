"""Measurement primitives for compare_bench.py: run a bench client and parse
its one-line result, meter a broker process (CPU seconds, peak RSS), repeat a
measurement (one warm-up run discarded, then N runs) and take medians.

A client prints one line "KIND key=value key=value ..." (rdkafka_bench.c,
nats_bench.c); run_client returns those values as floats together with the
client's own CPU seconds.
"""

import ctypes
import os
import statistics
import subprocess
import time

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class ClientFailed(Exception):
    """A client exited non-zero. values: what it printed (may be partial)."""

    def __init__(self, message, values):
        super().__init__(message)
        self.values = values


def parse_result(stdout):
    """The key=value fields of the last line that has any."""
    for line in reversed(stdout.strip().splitlines()):
        fields = [f for f in line.split()[1:] if "=" in f]
        if fields:
            return {k: float(v) for k, v in (f.split("=", 1) for f in fields)}
    return {}


def run_client(argv, timeout=900):
    """Runs argv; returns its result fields plus wall_s, and mb_per_s (10^6
    bytes of message values per second) when it printed bytes and seconds.
    Raises ClientFailed when it exits non-zero (values still attached)."""
    start = time.monotonic()
    proc = subprocess.Popen([str(a) for a in argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise ClientFailed("%s timed out after %d s" % (os.path.basename(str(argv[0])), timeout), parse_result(out))
    # communicate() reaped the child: its CPU time is now in RUSAGE_CHILDREN,
    # which measure() samples around each run.
    values = parse_result(out)
    values["wall_s"] = time.monotonic() - start
    if values.get("seconds", 0) > 0 and "bytes" in values:
        values["mb_per_s"] = values["bytes"] / values["seconds"] / 1e6
    if proc.returncode != 0:
        raise ClientFailed("%s %s exited %d: %s" % (os.path.basename(str(argv[0])), argv[1], proc.returncode,
                                                    err.strip()[-600:]), values)
    return values


def machine_busy_s():
    """CPU seconds all processes have spent busy (not idle, not iowait),
    summed over all cores, from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / CLOCK_TICKS


def children_cpu_s():
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _process_cpu_clock(pid):
    """The clock id of pid's CPU time (clock_getcpuclockid(3): user + system
    of all its threads, the exited ones included, in nanoseconds), or None
    where the C library does not offer it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        clock = ctypes.c_int()
        if libc.clock_getcpuclockid(pid, ctypes.byref(clock)) != 0:
            return None
        time.clock_gettime(clock.value)
        return clock.value
    except (AttributeError, OSError):
        return None


class ProcessMeter:
    """CPU seconds (user + system, all threads) and peak resident set
    (VmHWM) of one pid. The CPU time comes from the process's CPU clock,
    exact to the nanosecond: /proc/PID/stat counts whole clock ticks (10
    ms), about 8 % of a 256 MiB produce run's broker CPU. /proc/PID/stat
    remains the fallback."""

    def __init__(self, pid):
        self.pid = pid
        self.hwm_reset_works = None
        self.clock = _process_cpu_clock(pid)

    def cpu_s(self):
        if self.clock is not None:
            try:
                return time.clock_gettime(self.clock)
            except OSError:
                self.clock = None
        with open("/proc/%d/stat" % self.pid) as f:
            stat = f.read()
        # Fields after the parenthesised command name; utime, stime are 14, 15.
        fields = stat[stat.rindex(")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS

    def status_kib(self, field):
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        return -1

    def reset_peak(self):
        """Resets VmHWM to the current RSS (Linux clear_refs 5), so the next
        peak_rss_kib() is the peak of what ran since. Remembers whether the
        kernel allowed it: if not, peaks are since the process started."""
        try:
            with open("/proc/%d/clear_refs" % self.pid, "w") as f:
                f.write("5")
            self.hwm_reset_works = True
        except OSError:
            self.hwm_reset_works = False

    def peak_rss_kib(self):
        return self.status_kib("VmHWM")

    def rss_kib(self):
        return self.status_kib("VmRSS")


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


class Series:
    """The runs of one measurement: the warm-up (discarded) and the measured
    runs, each a dict of values. A run whose client failed but still printed
    its figures (say, a few messages rejected by the broker) is kept in runs
    with its error under "error"; one that printed nothing is only in
    failures. medians() is what the report shows."""

    def __init__(self, label):
        self.label = label
        self.runs = []
        self.warmup = None
        self.failures = []
        self.peak_rss_kib = None
        # The copy floor measured right before these runs (a Series of
        # copy_floor runs doing the same durability work), or None.
        self.floor = None

    def medians(self):
        keys = sorted({k for r in self.runs for k in r if k != "error"})
        return {k: median([r.get(k) for r in self.runs]) for k in keys}

    def errors(self):
        """Error texts of the measured runs (kept or failed)."""
        return [r["error"] for r in self.runs + self.failures if r.get("error")]

    def pool(self, other):
        """Adds other's measured runs (same measurement, another pass)."""
        self.runs += other.runs
        self.failures += other.failures

    def undelivered(self):
        return int(sum(r.get("errors", 0) for r in self.runs + self.failures))

    def to_json(self):
        out = {"label": self.label, "warmup": self.warmup, "runs": self.runs, "failures": self.failures,
               "medians": self.medians(), "peak_rss_kib": self.peak_rss_kib}
        if self.floor is not None:
            out["floor"] = self.floor.to_json()
        return out


# Values that make a run worth keeping even when its client reported errors.
RESULT_KEYS = ("mb_per_s", "e2e_p50_us", "p50_us")


def measure(label, run_once, runs, meter=None, log=print, cleanup=None):
    """Calls run_once(index, warmup) once as warm-up (discarded) and `runs`
    times more. Each call returns a dict of values (bytes moved under
    'bytes'); with a meter, the broker's CPU seconds (per GB moved, and as a
    share of one core over the run's wall time) and the peak RSS over all the
    runs are added. A run that raises ClientFailed is kept as described in
    Series. Before each run, dirty pages are written back (sync), so that no
    run pays for an earlier one's writeback; after it, cleanup(index) (if
    given) runs outside the measurement, e.g. to delete the run's topic."""
    series = Series(label)
    if meter:
        meter.reset_peak()
    for i in range(runs + 1):
        warmup = i == 0
        os.sync()
        cpu0 = meter.cpu_s() if meter else 0.0
        client0 = children_cpu_s()
        busy0 = machine_busy_s()
        start = time.monotonic()
        try:
            values = run_once(i, warmup)
        except ClientFailed as e:
            values = dict(e.values)
            values["error"] = str(e)
        # A latency client prints -1 for a percentile it has no sample of:
        # not a figure, so such a run is a failure, not a run.
        values = {k: v for k, v in values.items()
                  if not (k.endswith("_us") and isinstance(v, (int, float)) and v < 0)}
        wall = time.monotonic() - start
        if meter:
            values["broker_cpu_s"] = meter.cpu_s() - cpu0
            values["broker_cpu_pct"] = 100.0 * values["broker_cpu_s"] / wall if wall > 0 else None
        values["client_cpu_s"] = children_cpu_s() - client0
        # What the rest of the machine took meanwhile (other users, kernel
        # threads such as writeback): the noise this run saw.
        other = machine_busy_s() - busy0 - values["client_cpu_s"] - values.get("broker_cpu_s", 0.0)
        values["other_cpu_pct"] = max(0.0, 100.0 * other / (wall * os.cpu_count())) if wall > 0 else None
        moved = values.get("bytes", 0)
        if moved > 0:
            if meter:
                values["broker_cpu_s_per_gb"] = values["broker_cpu_s"] / (moved / 1e9)
            values["client_cpu_s_per_gb"] = values["client_cpu_s"] / (moved / 1e9)
        if cleanup:
            cleanup(i)
        if warmup:
            series.warmup = values
        elif any(k in values for k in RESULT_KEYS):
            series.runs.append(values)
        else:
            series.failures.append(values)
        log("  %-52s %s%s" % (label, "warm-up " if warmup else "run %d   " % i, summarize(values)))
    if meter:
        series.peak_rss_kib = meter.peak_rss_kib()
    return series


def summarize(values):
    parts = []
    if "mb_per_s" in values:
        parts.append("%.1f MB/s" % values["mb_per_s"])
    if values.get("msgs_per_s"):
        parts.append("%.0f msg/s" % values["msgs_per_s"])
    if "e2e_p50_us" in values:
        parts.append("e2e p50/p99/p99.9 %.2f/%.2f/%.2f ms" % (
            values["e2e_p50_us"] / 1e3, values["e2e_p99_us"] / 1e3, values["e2e_p999_us"] / 1e3))
    if "p50_us" in values:
        parts.append("p50/p99/p99.9 %.3f/%.3f/%.3f ms" % (
            values["p50_us"] / 1e3, values["p99_us"] / 1e3, values["p999_us"] / 1e3))
    if values.get("broker_cpu_s_per_gb") is not None:
        parts.append("broker %.2f CPU s/GB" % values["broker_cpu_s_per_gb"])
    elif values.get("broker_cpu_pct") is not None:
        parts.append("broker %.1f%% CPU" % values["broker_cpu_pct"])
    if values.get("errors"):
        parts.append("%d NOT DELIVERED" % values["errors"])
    if values.get("error"):
        parts.append("ERROR: %s" % values["error"].replace("\n", " | ")[:300])
    return ", ".join(parts)
