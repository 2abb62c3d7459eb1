"""Renders compare_bench.py's rows as report.md (tables a user can read at a
glance), chart.png (gnuplot: each Eddy figure as a ratio to JetStream and to
the hardware limit), results.json (every run) and machine.md.

Ratios are always "higher is better for Eddy": throughput Eddy / other,
latency other / Eddy (at p99). 1 means parity.
"""

import json
import math
import os
import shutil
import subprocess
import time

import bench_machine


def _mb(v):
    if v is None:
        return "n/a"
    return "%.0f MB/s" % v if v >= 100 else "%.1f MB/s" % v if v >= 10 else "%.2f MB/s" % v


def _msgs(v):
    if v is None:
        return ""
    if v >= 1e6:
        return "%.2f M msg/s" % (v / 1e6)
    if v >= 1e3:
        return "%.1f k msg/s" % (v / 1e3)
    return "%.0f msg/s" % v


def _ratio(v):
    if v is None:
        return "n/a"
    return "%.1f×" % v if v >= 10 else "%.2f×" % v


def _ms(us):
    return "n/a" if us is None else "%.2f" % (us / 1000.0)


def _div(a, b):
    return a / b if a is not None and b not in (None, 0) else None


def _failures(series):
    return len(series.failures) if series is not None else 0


def throughput_ratios(row):
    e = row["eddy"].medians().get("mb_per_s")
    p = row["peer"].medians().get("mb_per_s") if row["peer"] else None
    return _div(e, p), _div(e, row["limit"])


def latency_ratios(row):
    e = row["eddy"].medians().get("e2e_p99_us")
    p = row["peer"].medians().get("e2e_p99_us") if row["peer"] else None
    floor = row["limit"].medians().get("p99_us") if row["limit"] else None
    return _div(p, e), _div(floor, e)


def _flag(series):
    return " ⚠" if series.errors() or series.undelivered() else ""


def _cell_throughput(series):
    if series is None:
        return "n/a"
    if not series.runs:
        return "failed"
    m = series.medians()
    return "%s (%s)%s" % (_mb(m.get("mb_per_s")), _msgs(m.get("msgs_per_s")), _flag(series))


def _cell_latency(series):
    if series is None:
        return "n/a"
    if not series.runs:
        return "failed"
    m = series.medians()
    return "%s / %s / %s%s" % (_ms(m.get("e2e_p50_us")), _ms(m.get("e2e_p99_us")), _ms(m.get("e2e_p999_us")),
                               _flag(series))


def _throughput_table(rows):
    out = ["| workload | durability | Eddy | JetStream | limit (what) | Eddy ÷ JetStream | Eddy ÷ limit |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        vs_peer, vs_limit = throughput_ratios(r)
        mark = "" if r["peer_matches"] else " †"
        out.append("| %s | %s | %s | %s%s | %s (%s) | %s%s | %s |" % (
            r["workload"], r["mode"], _cell_throughput(r["eddy"]), _cell_throughput(r["peer"]), mark,
            _mb(r["limit"]), r["limit_name"] or "none", _ratio(vs_peer), mark, _ratio(vs_limit)))
    return "\n".join(out) + "\n"


def _latency_table(rows):
    out = ["| workload | durability | Eddy p50 / p99 / p99.9 ms | JetStream p50 / p99 / p99.9 ms | "
           "hardware floor p50 / p99 / p99.9 ms | JetStream ÷ Eddy (p99) | floor ÷ Eddy (p99) |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        vs_peer, vs_floor = latency_ratios(r)
        mark = "" if r["peer_matches"] else " †"
        floor = "none measured"
        if r["limit"] is not None:
            m = r["limit"].medians()
            floor = "%s / %s / %s (%s)" % (_ms(m.get("p50_us")), _ms(m.get("p99_us")), _ms(m.get("p999_us")),
                                           r["limit_name"])
        out.append("| %s | %s | %s | %s%s | %s | %s%s | %s |" % (
            r["workload"], r["mode"], _cell_latency(r["eddy"]), _cell_latency(r["peer"]), mark, floor,
            _ratio(vs_peer), mark, _ratio(vs_floor)))
    return "\n".join(out) + "\n"


def _resource_table(rows):
    out = ["| workload | durability | broker CPU: Eddy | JetStream | broker peak RSS: Eddy | JetStream | "
           "client CPU: librdkafka | libnats | other processes' CPU during the runs: Eddy | JetStream |",
           "|---|---|---|---|---|---|---|---|---|---|"]

    def cpu(series, key):
        """CPU s/GB for throughput rows; share of one core for fixed-rate
        rows (where the bytes moved are few and set by the rate)."""
        if series is None:
            return "n/a"
        m = series.medians()
        if m.get(key) is not None:
            return "%.2f s/GB" % m[key]
        if key.startswith("broker") and m.get("broker_cpu_pct") is not None:
            return "%.1f%% of a core" % m["broker_cpu_pct"]
        return "n/a"

    def rss(series):
        return "n/a" if series is None or series.peak_rss_kib is None else "%.1f MiB" % (series.peak_rss_kib / 1024)

    def other(series):
        v = series.medians().get("other_cpu_pct") if series else None
        return "n/a" if v is None else "%.0f%%" % v

    for r in rows:
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["workload"], r["mode"], cpu(r["eddy"], "broker_cpu_s_per_gb"), cpu(r["peer"], "broker_cpu_s_per_gb"),
            rss(r["eddy"]), rss(r["peer"]), cpu(r["eddy"], "client_cpu_s_per_gb"),
            cpu(r["peer"], "client_cpu_s_per_gb"), other(r["eddy"]), other(r["peer"])))
    return "\n".join(out) + "\n"


def _gateway_table(rows):
    """The gateway day's own figures (gateway_day.py), Eddy next to
    JetStream; rows: the workload's rows (both carry the same series)."""
    eddy, peer = rows[0]["eddy"], rows[0]["peer"]

    def cell(series, fn):
        if series is None or not series.runs:
            return "failed" if series is not None else "not run"
        try:
            return fn(series.medians()) + _flag(series)
        except (TypeError, KeyError):
            return "n/a"

    def ms3(a, b, c=None):
        return lambda m: " / ".join(_ms(m.get(k)) for k in (a, b, c) if k)

    def pct(key):
        return lambda m: "%.1f%%" % m[key]

    lines = [
        ("produce ack latency p50 / p99 ms (median over sensors)", ms3("ack_p50_us", "ack_p99_us")),
        ("produce ack p99, worst sensor (ms)", lambda m: _ms(m["ack_p99_us_worst"])),
        ("local consumer e2e p50 / p99 / p99.9 ms (median over sensors)",
         ms3("e2e_p50_us", "e2e_p99_us", "e2e_p999_us")),
        ("local consumer e2e p99, worst sensor (ms)", lambda m: _ms(m["e2e_p99_us_worst"])),
        ("produced (acknowledged) msg/s", lambda m: _msgs(m["produced_msgs_per_s"])),
        ("forwarded rate (msgs ÷ (send time + drain))", lambda m: _msgs(m["msgs_per_s"])),
        ("forwarded when the last sensor exited", lambda m: "%.2f%% (%.0f msgs behind)" % (
            100 * m["forwarded_share_at_end"], m["lag_msgs_at_end"])),
        ("largest lag seen (sampled every second), msgs", lambda m: "%.0f" % m["max_lag_msgs"]),
        ("drain after the last sensor exited, ms", lambda m: "%.0f" % m["drain_ms"]),
        ("edge broker CPU, share of one core", pct("broker_cpu_pct")),
        ("central broker CPU, share of one core", pct("central_cpu_pct")),
        ("sensor clients' CPU, share of one core (all processes)", pct("client_cpu_pct")),
        ("other processes' CPU, share of the machine", pct("other_cpu_pct")),
    ]
    out = ["| figure | Eddy | JetStream |", "|---|---|---|"]
    for name, fn in lines:
        out.append("| %s | %s | %s |" % (name, cell(eddy, fn), cell(peer, fn)))

    def rss(series):
        return "n/a" if series is None or series.peak_rss_kib is None else "%.1f MiB" % (series.peak_rss_kib / 1024)

    out.append("| edge broker peak RSS | %s | %s |" % (rss(eddy), rss(peer)))
    return "\n".join(out) + "\n"


def _limits_table(limits):
    out = ["| limit | median | runs |", "|---|---|---|"]
    for desc, series in limits.values():
        m = series.medians()
        if not series.runs:
            out.append("| %s | failed | |" % desc)
        elif "mb_per_s" in m:
            value = _mb(m["mb_per_s"])
            runs = ", ".join("%.0f" % r["mb_per_s"] for r in series.runs)
        else:
            value = "p50 %s / p99 %s / p99.9 %s ms" % (_ms(m.get("p50_us")), _ms(m.get("p99_us")),
                                                       _ms(m.get("p999_us")))
            runs = ", ".join("%.3f" % (r["p99_us"] / 1000) for r in series.runs) + " (p99 ms)"
        out.append("| %s | %s | %s |" % (desc, value, runs or "failed"))
    return "\n".join(out) + "\n"


def _distinct_lines(texts, limit=3):
    """The first `limit` distinct lines of the error texts, for a summary."""
    seen = []
    for t in texts:
        for line in t.splitlines():
            line = line.strip()
            if line and line not in seen:
                seen.append(line)
    return "; ".join(seen[:limit]) + (" ..." if len(seen) > limit else "")


def _problems(rows, limits, failed):
    lines = []
    if failed:
        lines.append("- The run stopped early: %s. Rows after that point are missing." % failed)
    seen = set()
    for r in rows:
        for who, series in (("Eddy", r["eddy"]), ("JetStream", r["peer"])):
            if series is None or id(series) in seen or not series.errors():
                continue
            seen.add(id(series))
            bad = [x for x in series.runs + series.failures if x.get("error")]
            lines.append("- %s, %s (%s): %d of %d measured runs reported errors, %d messages not delivered "
                         "(figures shown are from the messages that were); client said: %s" % (
                             who, r["workload"], r["mode"], len(bad), len(series.runs) + len(series.failures),
                             series.undelivered(), _distinct_lines(series.errors())))
    for desc, series in limits.values():
        if series.errors():
            lines.append("- limit %s: %s" % (desc, _distinct_lines(series.errors())))
    return "\n".join(lines) + "\n" if lines else "None: every run delivered every message.\n"


def _chart(out_dir, rows):
    """chart.dat + chart.gp -> chart.png; returns the PNG path (or None when
    gnuplot failed, with the reason in chart.err)."""
    dat = os.path.join(out_dir, "chart.dat")
    values = []
    with open(dat, "w") as f:
        f.write("# label  vs_jetstream  vs_limit   (higher = better for Eddy; ? = not measured)\n")
        for r in rows:
            vs_peer, vs_limit = throughput_ratios(r) if r["kind"] == "throughput" else latency_ratios(r)
            label = r["short"] + ("*" if not r["peer_matches"] else "") + ("!" if _flag(r["eddy"]) else "")
            f.write('"%s" %s %s\n' % (label, "%.4g" % vs_peer if vs_peer else "?",
                                      "%.4g" % vs_limit if vs_limit else "?"))
            values += [v for v in (vs_peer, vs_limit) if v]
    top = 10 ** math.ceil(math.log10(max(values + [10]) * 1.5))
    bottom = 10 ** math.floor(math.log10(min(values + [0.1]) / 1.5))
    png = os.path.join(out_dir, "chart.png")
    gp = os.path.join(out_dir, "chart.gp")
    with open(gp, "w") as f:
        f.write("""set terminal pngcairo size 1600,820 font "sans,11"
set output "%s"
set title "Eddy as a ratio to NATS JetStream and to the hardware limit (same run; 1 = parity, higher = better for Eddy)\\nthroughput: Eddy / other;  latency (e2e p99): other / Eddy;  * = JetStream gives a weaker guarantee here;  ! = some Eddy runs had errors"
set datafile missing "?"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set yrange [%g:%g]
set format y "%%g"
set ytics (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000, 3000)
set grid ytics
set xtics rotate by -50 font ",10" nomirror
set key top left
set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2 lc rgb "black"
set bmargin 8
plot "%s" using 2:xtic(1) title "Eddy vs JetStream" lc rgb "#1f77b4", \\
     "" using 3 title "Eddy vs hardware limit" lc rgb "#ff7f0e"
""" % (png, bottom, top, dat))
    result = subprocess.run(["gnuplot", gp], capture_output=True, text=True)
    if result.returncode != 0:
        with open(os.path.join(out_dir, "chart.err"), "w") as f:
            f.write(result.stderr)
        return None
    return png


def write(out_dir, rows, limits, machine, idle_rss_kib, opts, started, elapsed, failed):
    os.makedirs(out_dir, exist_ok=True)
    throughput = [r for r in rows if r["kind"] == "throughput"]
    latency = [r for r in rows if r["kind"] == "latency"]
    png = _chart(out_dir, rows)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started))
    idle = ", ".join("%s %.1f MiB" % (k, v / 1024) for k, v in idle_rss_kib.items())
    parts = [
        "# Eddy vs NATS JetStream vs the hardware\n",
        "Run %s, took %.0f s; %d measured runs per figure after one discarded warm-up, medians shown; "
        "produce runs scaled by %g, consume topic %d MiB, latency runs %d s, gateway-day runs %d s. How and why: "
        "[METHOD.md](../METHOD.md) (tests/bench/METHOD.md).\n" % (
            when, elapsed, opts.runs, opts.scale, opts.consume_mib, opts.latency_seconds,
            getattr(opts, "gateway_seconds", 0)),
        "Ratios: higher is better for Eddy, 1 is parity. Throughput: Eddy ÷ other. Latency: other ÷ Eddy at p99. "
        "† JetStream (nats-server 2.9) cannot fsync before acknowledging, so next to Eddy's acks=all/disk its "
        "figure is a reference with a weaker guarantee, not a like-for-like peer. Eddy's acks=1 rows use the "
        "gateway's default topic config (eddy.acks.all.waits.for=disk): the producer is acknowledged after the "
        "append, but a consumer sees a record only once it is synced, so their end-to-end latency includes the "
        "fdatasync. ⚠: some runs had errors (see Problems).\n",
        "![Eddy as a ratio to JetStream and to the hardware limit](chart.png)\n" if png else
        "(chart.png could not be drawn: see chart.err)\n",
        "## Throughput\n", _throughput_table(throughput),
        "## End-to-end latency\n",
        "Producer and consumer in one client process; each message carries its scheduled send time, so a late "
        "send counts against the system. 1 partition / 1 stream.\n",
        _latency_table(latency),
        "## Resources\n",
        "Broker CPU seconds (utime+stime from /proc/PID/stat) per 10^9 bytes of message values moved (for the "
        "fixed-rate rows: share of one core); peak RSS (VmHWM, reset before each workload) over its warm-up and "
        "runs. Idle RSS after start: %s. The last columns are the noise: CPU that other processes (other users, "
        "kernel writeback) took during the runs, as a share of the whole machine.\n" % (idle or "n/a"),
        _resource_table(rows),
    ]
    gateway = [r for r in rows if r.get("gateway_day")]
    if gateway:
        parts += [
            "## Gateway day\n",
            "%s. Edge broker → forwarding link → central broker on the same machine; Eddy: a forward link "
            "to a second eddy; JetStream: a leaf-node edge server whose streams a central stream sources. Each "
            "sensor is one client process with its own topic (stream) and a consumer of it in the same process. "
            "Medians of the runs; latencies are per-sensor percentiles, then the median (or the worst) over the "
            "sensors. See METHOD.md for what matches what.\n" % gateway[0]["workload"].rsplit(",", 1)[0],
            _gateway_table(gateway)]
    parts += [
        "## Limits measured in this run\n", _limits_table(limits),
        "## Problems\n", _problems(rows, limits, failed),
        "## Machine\n", bench_machine.facts_markdown(machine) if machine else "unknown\n",
    ]
    report = os.path.join(out_dir, "report.md")
    with open(report, "w") as f:
        f.write("\n".join(parts))
    with open(os.path.join(out_dir, "machine.md"), "w") as f:
        f.write("# Machine of the latest benchmark run\n\n" + (bench_machine.facts_markdown(machine) if machine else ""))
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"started": when, "elapsed_s": elapsed, "failed": failed, "machine": machine,
                   "options": {k: v for k, v in vars(opts).items()},
                   "idle_rss_kib": idle_rss_kib,
                   "limits": {k: {"what": d, **s.to_json()} for k, (d, s) in limits.items()},
                   "rows": [{**{k: v for k, v in r.items() if k not in ("eddy", "peer", "limit")},
                             "eddy": r["eddy"].to_json(), "peer": r["peer"].to_json() if r["peer"] else None,
                             "limit": r["limit"].to_json() if hasattr(r["limit"], "to_json") else r["limit"]}
                            for r in rows]}, f, indent=1)
    return {"report": report, "chart": png}


def publish(out_dir, dest):
    """Copies what the README links (report, chart, machine facts, raw
    figures) to dest, e.g. tests/bench/results."""
    os.makedirs(dest, exist_ok=True)
    for name in ("report.md", "chart.png", "machine.md", "results.json"):
        src = os.path.join(out_dir, name)
        if os.path.exists(src):
            shutil.copy(src, os.path.join(dest, name))
