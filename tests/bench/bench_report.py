"""Renders compare_bench.py's rows as report.md (tables a user can read at a
glance), chart.png (gnuplot: each Eddy figure as a ratio to Kafka, to
JetStream and to the hardware limit), results.json (every run) and
machine.md.

Ratios are always "higher is better for Eddy": throughput Eddy / other,
latency other / Eddy (at p99). 1 means parity. A row holds Eddy's series
and the peers' (row["peers"]: name -> Series or absent, row["matches"]:
name -> whether that peer's mode gives Eddy's guarantee).
"""

import json
import math
import os
import shutil
import subprocess
import time

import bench_machine

# A sync slower than this is a disk stall (the disk rows run by run): twenty
# times the 0.5 ms the issue allows Eddy's e2e p99 over fio's, ten times
# this VM's usual p99 of one fdatasync. It must be a bound of Eddy's fsync
# histogram (src/metrics/histogram.h): compare_bench.py reads that bucket.
STALL_MS = 10

# The peers in the order of the columns.
PEERS = ("Kafka", "JetStream")


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
    return "%.1f×" % v if v >= 10 else "%.2f×" % v if v >= 0.1 else "%.3f×" % v


def _ms(us):
    return "n/a" if us is None else "%.2f" % (us / 1000.0)


def _div(a, b):
    return a / b if a is not None and b not in (None, 0) else None


def _failures(series):
    return len(series.failures) if series is not None else 0


def _peer(row, name):
    return row.get("peers", {}).get(name)


def _mark(row, name):
    """† where the peer's figure is a reference with a weaker guarantee."""
    return "" if _peer(row, name) is None or row.get("matches", {}).get(name, True) else " †"


def ratios(row):
    """({peer: Eddy's ratio to it}, Eddy's ratio to the limit), higher =
    better for Eddy; None where not measured."""
    if row["kind"] in ("throughput", "validation"):
        e = row["eddy"].medians().get("mb_per_s")
        peers = {n: _div(e, _peer(row, n).medians().get("mb_per_s")) if _peer(row, n) else None for n in PEERS}
        return peers, _div(e, row["limit"])
    e = row["eddy"].medians().get("e2e_p99_us")
    peers = {n: _div(_peer(row, n).medians().get("e2e_p99_us"), e) if _peer(row, n) else None for n in PEERS}
    floor = row["limit"].medians().get("p99_us") if row["limit"] else None
    return peers, _div(floor, e)


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


def _table(header, rows):
    return "\n".join(["| %s |" % " | ".join(header), "|%s" % ("---|" * len(header))] +
                     ["| %s |" % " | ".join(r) for r in rows]) + "\n"


def _throughput_table(rows, peers=PEERS):
    header = (["workload", "durability", "Eddy"] + list(peers) + ["limit (what)"] +
              ["Eddy ÷ %s" % n for n in peers] + ["Eddy ÷ limit"])
    out = []
    for r in rows:
        vs_peer, vs_limit = ratios(r)
        out.append([r["workload"], r["mode"], _cell_throughput(r["eddy"])] +
                   [_cell_throughput(_peer(r, n)) + _mark(r, n) for n in peers] +
                   ["%s (%s)" % (_mb(r["limit"]), r["limit_name"] or "none")] +
                   [_ratio(vs_peer[n]) + _mark(r, n) for n in peers] + [_ratio(vs_limit)])
    return _table(header, out)


def _latency_table(rows, peers=PEERS):
    header = (["workload", "durability", "Eddy p50 / p99 / p99.9 ms"] +
              ["%s p50 / p99 / p99.9 ms" % n for n in peers] + ["hardware floor p50 / p99 / p99.9 ms"] +
              ["%s ÷ Eddy (p99)" % n for n in peers] + ["floor ÷ Eddy (p99)"])
    out = []
    for r in rows:
        vs_peer, vs_floor = ratios(r)
        floor = "none measured"
        if r["limit"] is not None:
            m = r["limit"].medians()
            floor = "%s / %s / %s (%s)" % (_ms(m.get("p50_us")), _ms(m.get("p99_us")), _ms(m.get("p999_us")),
                                           r["limit_name"])
        if r.get("open_floor") is not None:
            m = r["open_floor"].medians()
            floor += "; open loop %s / %s / %s (%s)" % (_ms(m.get("e2e_p50_us")), _ms(m.get("e2e_p99_us")),
                                                        _ms(m.get("e2e_p999_us")), r["open_floor_name"])
        out.append([r["workload"], r["mode"], _cell_latency(r["eddy"])] +
                   [_cell_latency(_peer(r, n)) + _mark(r, n) for n in peers] + [floor] +
                   [_ratio(vs_peer[n]) + _mark(r, n) for n in peers] + [_ratio(vs_floor)])
    return _table(header, out)


def _pairs(row):
    """Eddy's measured runs of a disk row with the fio and sync_floor runs
    measured right before each (matched by their pair index)."""
    def by_pair(series):
        return {r["pair"]: r for r in (series.runs if series is not None else []) if "pair" in r}
    fio, open_loop = by_pair(row["limit"]), by_pair(row.get("open_floor"))
    return [(r, fio.get(r["pair"]), open_loop.get(r["pair"])) for r in row["eddy"].runs if "pair" in r]


def disk_runs_table(rows, stall_ms):
    """The disk rows run by run, with a verdict line per row. This VM's
    disk stalls for tens of ms in some minutes and not in others, so a
    row's median mixes runs that met a stall with runs that did not. A run
    is judged against its paired fio run only when none of Eddy's own syncs
    in it (its fsync histogram) and none of fio's took over stall_ms. A row
    is a dict with short (its name), eddy (a Series of Eddy's runs), limit
    (a Series of the fio runs) and optionally open_floor (a Series of the
    sync_floor runs; the column is left out when no row has one), the runs
    matched by their pair index (EddySystem.watch_syncs)."""
    with_open_loop = any(r.get("open_floor") is not None for r in rows)
    out, verdicts = [], []
    for r in rows:
        pairs = _pairs(r)
        if not pairs:
            continue
        margins = []
        for eddy, fio, open_loop in pairs:
            stalls = eddy.get("syncs_over_stall")
            fio_max = fio.get("max_us") if fio else None
            judged = stalls == 0 and fio_max is not None and fio_max <= stall_ms * 1000
            over = None
            if fio and fio.get("p99_us") is not None and eddy.get("e2e_p99_us") is not None:
                over = (eddy["e2e_p99_us"] - fio["p99_us"]) / 1000.0
            if judged and over is not None:
                margins.append(over)
            cells = [r["short"], str(eddy["pair"]), _ms(eddy.get("e2e_p99_us")),
                     "n/a" if stalls is None else "%s / %d" % (eddy.get("syncs_over_1ms", "?"), stalls),
                     "%s (%s)" % (_ms(fio.get("p99_us")), _ms(fio_max)) if fio else "n/a"]
            if with_open_loop:
                cells.append("%s (%s)" % (_ms(open_loop.get("e2e_p99_us")), _ms(open_loop.get("sync_max_us")))
                             if open_loop else "n/a")
            out.append(cells + ["%+.2f" % over if over is not None else "n/a", "yes" if judged else "no: a stall"])
        verdicts.append("%s: %d of %d runs judged%s" % (
            r["short"], len(margins), len(pairs),
            "; Eddy's p99 over fio's in them: %s ms" % ", ".join("%+.2f" % m for m in margins) if margins else ""))
    if not out:
        return ""
    header = ["row", "run", "Eddy e2e p99 ms", "Eddy's syncs over 1 ms / over %d ms" % stall_ms,
              "fio p99 ms (slowest sync)"] + (["open loop p99 ms (slowest sync)"] if with_open_loop else []) + [
              "Eddy − fio p99 ms", "judged"]
    return _table(header, out) + "\n" + "".join("- %s\n" % v for v in verdicts)


def _cpu(series, key):
    """CPU s/GB for throughput rows; share of one core for fixed-rate rows
    (where the bytes moved are few and set by the rate)."""
    if series is None:
        return "n/a"
    m = series.medians()
    if m.get(key) is not None:
        return "%.2f s/GB" % m[key]
    if key.startswith("broker") and m.get("broker_cpu_pct") is not None:
        return "%.1f%% of a core" % m["broker_cpu_pct"]
    return "n/a"


def _rss(series):
    return "n/a" if series is None or series.peak_rss_kib is None else "%.1f MiB" % (series.peak_rss_kib / 1024)


def _other(series):
    v = series.medians().get("other_cpu_pct") if series else None
    return "n/a" if v is None else "%.0f%%" % v


def _floor_ratio(series, row, limits):
    """Broker CPU per GB as a multiple of the copy floor (the CPU per GB of
    the copies no broker avoids: copy_floor.c): the floor measured right
    before the series where there is one (produce rows), else the row's
    limit; "n/a" without either."""
    key = row.get("cpu_floor")
    if series is None:
        return "n/a"
    if getattr(series, "floor", None) is not None:
        floor = series.floor.medians().get("floor_cpu_s_per_gb")
    elif key in (limits or {}):
        floor = limits[key][1].medians().get("floor_cpu_s_per_gb")
    else:
        return "n/a"
    cpu = series.medians().get("broker_cpu_s_per_gb")
    return "%.2fx (of %.3f)" % (cpu / floor, floor) if cpu is not None and floor else "n/a"


def _resource_table(rows, peers=PEERS, limits=None):
    names = ["Eddy"] + list(peers)
    header = (["workload", "durability"] + ["broker CPU: %s" % n for n in names] +
              ["CPU / copy floor: %s" % n for n in names] + ["peak RSS: %s" % n for n in names])
    out = []
    for r in rows:
        series = [r["eddy"]] + [_peer(r, n) for n in peers]
        out.append([r["workload"], r["mode"]] + [_cpu(x, "broker_cpu_s_per_gb") for x in series] +
                   [_floor_ratio(x, r, limits) for x in series] + [_rss(x) for x in series])
    return _table(header, out)


def _client_table(rows, peers=PEERS):
    names = ["Eddy"] + list(peers)
    header = (["workload", "durability"] + ["client CPU, %s runs" % n for n in names] +
              ["other processes' CPU, %s runs" % n for n in names])
    out = []
    for r in rows:
        series = [r["eddy"]] + [_peer(r, n) for n in peers]
        out.append([r["workload"], r["mode"]] + [_cpu(x, "client_cpu_s_per_gb") for x in series] +
                   [_other(x) for x in series])
    return _table(header, out)


def _perf_test_table(rows):
    """kafka-producer-perf-test's own summary (steady state), Eddy next to
    Kafka."""
    def cell(series):
        if series is None:
            return "n/a", "n/a"
        if not series.runs:
            return "failed", "failed"
        m = series.medians()
        lat = " / ".join(_ms(m.get(k)) for k in ("avg_us", "p50_us", "p95_us", "p99_us", "p999_us", "max_us"))
        return "%s (%s)%s" % (_mb(m.get("mb_per_s")), _msgs(m.get("msgs_per_s")), _flag(series)), lat

    out = ["| durability | Eddy | Eddy latency avg / p50 / p95 / p99 / p99.9 / max ms | Kafka | "
           "Kafka latency avg / p50 / p95 / p99 / p99.9 / max ms | Eddy ÷ Kafka (throughput) | Kafka ÷ Eddy (p99) |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        e, k = r["eddy"], _peer(r, "Kafka")
        (et, el), (kt, kl) = cell(e), cell(k)
        em, km = e.medians(), (k.medians() if k else {})
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            r["mode"], et, el, kt, kl, _ratio(_div(em.get("mb_per_s"), km.get("mb_per_s"))),
            _ratio(_div(km.get("p99_us"), em.get("p99_us")))))
    return "\n".join(out) + "\n"


def _gateway_table(rows):
    """The gateway day's own figures (gateway_day.py), Eddy next to
    JetStream; rows: the workload's rows (both carry the same series)."""
    eddy, peer = rows[0]["eddy"], _peer(rows[0], "JetStream")

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


def _validation_table(rows):
    """Record validation on produce: Eddy validating, Eddy with
    eddy.validate.compressed.records=false, Kafka; broker CPU per GB of
    message values and the share of it validation takes."""
    def cell(series):
        if series is None:
            return "not run"
        if not series.runs:
            return "failed"
        m = series.medians()
        return "%s, %s%s" % (_mb(m.get("mb_per_s")), _cpu(series, "broker_cpu_s_per_gb"), _flag(series))

    out = ["| codec | Eddy, records validated (default) | Eddy, eddy.validate.compressed.records=false | "
           "validation's share of Eddy's broker CPU | Kafka (validates) | Eddy ÷ Kafka, broker CPU per GB |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        e = r["eddy"].medians().get("broker_cpu_s_per_gb")
        if r.get("walk_s_per_gb") is not None:
            off = "no switch; the walk alone: %.3f s/GB (measured in isolation)" % r["walk_s_per_gb"]
            share = _div(r["walk_s_per_gb"], e)
        else:
            off = cell(r.get("unvalidated"))
            u = r["unvalidated"].medians().get("broker_cpu_s_per_gb") if r.get("unvalidated") else None
            share = _div(e - u, e) if e is not None and u is not None else None
        k = _peer(r, "Kafka")
        kcpu = k.medians().get("broker_cpu_s_per_gb") if k else None
        out.append("| %s | %s | %s | %s | %s | %s |" % (
            r["codec"], cell(r["eddy"]), off, "n/a" if share is None else "%.0f%%" % (100 * share),
            cell(k), _ratio(_div(e, kcpu))))
    return "\n".join(out) + "\n"


def _limits_table(limits):
    out = ["| limit | median | runs |", "|---|---|---|"]
    for desc, series in limits.values():
        m = series.medians()
        if not series.runs:
            out.append("| %s | failed | |" % desc)
        elif "mb_per_s" in m:
            value = _mb(m["mb_per_s"])
            if m.get("floor_cpu_s_per_gb") is not None:
                value += ", %.3f CPU s/GB" % m["floor_cpu_s_per_gb"]
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
        for who, series in [("Eddy", r["eddy"])] + [(n, _peer(r, n)) for n in PEERS]:
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


def _chart(out_dir, rows, peers=PEERS):
    """chart.dat + chart.gp -> chart.png; returns the PNG path (or None when
    gnuplot failed, with the reason in chart.err)."""
    dat = os.path.join(out_dir, "chart.dat")
    values = []
    with open(dat, "w") as f:
        f.write("# label  %s  vs_limit   (higher = better for Eddy; ? = not measured)\n" %
                "  ".join("vs_" + n.lower() for n in peers))
        for r in rows:
            vs_peer, vs_limit = ratios(r)
            label = r["short"] + ("*" if "JetStream" in peers and _mark(r, "JetStream") else "") + ("!" if _flag(r["eddy"]) else "")
            cols = [vs_peer[n] for n in peers] + [vs_limit]
            f.write('"%s" %s\n' % (label, " ".join("%.4g" % v if v and v > 0 else "?" for v in cols)))
            values += [v for v in cols if v and v > 0]
    top = 10 ** math.ceil(math.log10(max(values + [10]) * 1.5))
    bottom = 10 ** math.floor(math.log10(min(values + [0.1]) / 1.5))
    png = os.path.join(out_dir, "chart.png")
    gp = os.path.join(out_dir, "chart.gp")
    colours = {"Kafka": "#2ca02c", "JetStream": "#1f77b4"}
    plots = ['"%s" using %d:xtic(1) title "Eddy vs %s" lc rgb "%s"' % (dat if i == 0 else "", i + 2,
                                                                        "Apache Kafka" if n == "Kafka" else
                                                                        "NATS JetStream", colours[n])
             for i, n in enumerate(peers)]
    plots.append('"%s" using %d%s title "Eddy vs hardware limit" lc rgb "#ff7f0e"' % (
        "" if peers else dat, len(peers) + 2, "" if peers else ":xtic(1)"))
    full = {"Kafka": "Apache Kafka", "JetStream": "NATS JetStream"}
    names = [full[n] for n in peers] + ["the hardware limit"]
    title = "Eddy as a ratio to " + (", to ".join(names[:-1]) + " and to " if len(names) > 1 else "") + names[-1]
    with open(gp, "w") as f:
        f.write("""set terminal pngcairo size 2000,860 font "sans,11"
set output "%s"
set title "%s (same run; 1 = parity, higher = better for Eddy)\\nthroughput: Eddy / other;  latency (e2e p99): other / Eddy;  * = JetStream gives a weaker guarantee here;  ! = some Eddy runs had errors;  perf-test = kafka-producer-perf-test (Java client)"
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
set bmargin 9
plot %s
""" % (png, title, bottom, top, ", \\\n     ".join(plots)))
    result = subprocess.run(["gnuplot", gp], capture_output=True, text=True)
    if result.returncode != 0:
        with open(os.path.join(out_dir, "chart.err"), "w") as f:
            f.write(result.stderr)
        return None
    return png


# What `make bench` writes next to report.md after compare_bench.py
# (file, what it holds).
OTHER_REPORTS = (
    ("tls.md", "TLS handshakes per second and consume over SSL vs PLAINTEXT, Eddy vs Kafka vs openssl s_server "
               "(tests/bench/tls_bench.py)"),
    ("metrics_cost.md", "the metrics listener's idle cost (RSS, CPU) and the wall time of a /metrics and "
                        "/status.json scrape (tests/bench/metrics_cost.py)"),
)


def _other_reports():
    return "".join("- [%s](%s): %s\n" % (name, name, what) for name, what in OTHER_REPORTS)


def write(out_dir, rows, limits, machine, idle_rss_kib, opts, started, elapsed, failed):
    os.makedirs(out_dir, exist_ok=True)
    throughput = [r for r in rows if r["kind"] == "throughput"]
    latency = [r for r in rows if r["kind"] == "latency"]
    perf_test = [r for r in rows if r.get("perf_test")]
    peers = [n for n in PEERS if any(_peer(r, n) is not None for r in rows)]
    validation = [r for r in rows if r["kind"] == "validation"]
    png = _chart(out_dir, [r for r in rows if r["kind"] in ("throughput", "latency")], peers)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started))
    idle = ", ".join("%s %.1f MiB" % (k, v / 1024) for k, v in idle_rss_kib.items())
    parts = [
        "# Eddy vs Apache Kafka vs NATS JetStream vs the hardware\n",
        "Run %s, took %.0f s; %d measured runs per figure after one discarded warm-up, medians shown; "
        "produce runs scaled by %g, consume topic %d MiB, latency runs %d s, gateway-day runs %d s. How and why: "
        "[METHOD.md](../METHOD.md) (tests/bench/METHOD.md).\n" % (
            when, elapsed, opts.runs, opts.scale, opts.consume_mib, opts.latency_seconds,
            getattr(opts, "gateway_seconds", 0)),
        "Ratios: higher is better for Eddy, 1 is parity. Throughput: Eddy ÷ other. Latency: other ÷ Eddy at p99. " +
        ("Kafka (one KRaft node, 1 GiB heap, default settings) is driven by the same librdkafka client as Eddy, "
         "in the matching mode: acks=1 next to Eddy's acks=1, acks=all (no fsync, Kafka's default) next to "
         "acks=all/page cache, and acks=all with the topic config flush.messages=1 (fsync before the "
         "acknowledgement) next to acks=all/disk. " if "Kafka" in peers else "") +
        "† JetStream (nats-server 2.9) cannot fsync before acknowledging, so next to Eddy's acks=all/disk its "
        "figure is a reference with a weaker guarantee, not a like-for-like peer. Eddy's acks=1 rows use the "
        "gateway's default topic config (eddy.acks.all.waits.for=disk): the producer is acknowledged after the "
        "append, but a consumer sees a record only once it is synced, so their end-to-end latency includes the "
        "fdatasync (Kafka's and JetStream's consumers see a record once it is in the page cache). "
        "The gateway day is Eddy and JetStream only. ⚠: some runs had errors (see Problems).\n",
        "![Eddy as a ratio to Kafka, to JetStream and to the hardware limit](chart.png)\n" if png else
        "(chart.png could not be drawn: see chart.err)\n",
        "## Throughput\n", _throughput_table(throughput, peers),
    ]
    if perf_test:
        parts += [
            "## The Java client: kafka-producer-perf-test\n",
            "Kafka's own producer benchmark (org.apache.kafka.tools.ProducerPerformance, kafka-clients %s, the "
            "JVM options of bin/kafka-producer-perf-test.sh), unthrottled, 1 KiB records to a new 1-partition "
            "topic, the Java producer's defaults (batch.size 16384, linger.ms 5; idempotent with acks=all) "
            "except acks. Each run sends a quarter more records first as the tool's warm-up "
            "(--warmup-records); shown is its steady-state summary: throughput and the latency from send() to "
            "the acknowledgement's callback, as the tool prints it (percentiles in whole ms).\n"
            % (machine.get("kafka", "").split()[-1] if machine.get("kafka") else "?"),
            _perf_test_table(perf_test)]
    parts += [
        "## End-to-end latency\n",
        "Producer and consumer in one client process; each message carries its scheduled send time, so a late "
        "send counts against the system. 1 partition / 1 stream. The raw client rows (Eddy and Kafka): "
        "tests/bench/raw_e2e.c, one thread, plain Produce and Fetch requests, each record stamped when sent; "
        "librdkafka's hand-offs between its own threads are not in them, so they show what the broker adds "
        "(METHOD.md, The clients).\n",
        _latency_table(latency, peers),
    ]
    disk_runs = disk_runs_table(latency, STALL_MS)
    if disk_runs:
        parts += [
            "### The disk rows run by run\n",
            "Each of Eddy's runs of the rows whose consumer waits for the sync (acks=all, disk, and acks=1: "
            "Eddy's acks=1 topics keep the gateway's default durability) next to the fio and sync_floor runs "
            "measured right before it. This VM's disk "
            "stalls for tens of milliseconds in some minutes and not in others; a run that meets a stall has "
            "its p99 set by the stall, whatever the broker does (the sync_floor runs, which have no broker, show "
            "it too). A run is judged against fio's p99 (the issue's check at 1 000 msg/s: within 0.5 ms) only "
            "when none of Eddy's own fdatasync calls in it (its eddy_fsync_duration_seconds histogram, read "
            "before and after the run) and none of fio's took over %d ms. Syncs over 1 ms are not stalls but "
            "still set a p99: at 1 000 msg/s a run of 5 s has its p99 in its 50 slowest records. In brackets: "
            "the slowest sync of that fio or sync_floor run.\n" % STALL_MS,
            disk_runs]
    parts += [
        "## Resources\n",
        "Broker CPU seconds (user + system time of the process, all its threads, from its CPU clock: "
        "clock_getcpuclockid; Kafka's is the JVM's) per 10^9 bytes of message values moved (for the fixed-rate rows: share of one core); peak RSS "
        "(VmHWM, reset before each workload) over its warm-up and runs. Idle RSS after start: %s. "
        "CPU / copy floor: that CPU per GB as a multiple of the copy floor's (in brackets, s/GB), which no "
        "broker can go under on this machine (tests/bench/copy_floor.c). Produce rows: recv + pwrite of as many "
        "bytes into a preallocated file, measured (warm-up and 3 runs) right before each system's series, with "
        "an fdatasync per MiB where that system syncs in that mode (Eddy but in acks=all/page cache, its acks=1 "
        "topics taking the gateway default eddy.acks.all.waits.for=disk; Kafka with flush.messages=1), because "
        "a syncing broker's process is charged the writeback that the kernel's flusher threads do for one that "
        "does not. Consume rows: sendfile of the topic's segment files (see the limits).\n"
        % (idle or "n/a"),
        _resource_table(rows, peers, limits),
        "Client CPU (librdkafka for Eddy and Kafka, libnats for JetStream, the Java producer in the "
        "perf-test rows) per 10^9 bytes, and the noise: CPU that other processes (other users, kernel "
        "writeback, the idle brokers) took during the runs, as a share of the whole machine.\n",
        _client_table(rows, peers),
    ]
    gateway = [r for r in rows if r.get("gateway_day")]
    if gateway:
        parts += [
            "## Gateway day\n",
            "%s. Edge broker → forwarding link → central broker on the same machine; Eddy: a forward link "
            "to a second eddy; JetStream: a leaf-node edge server whose streams a central stream sources "
            "(Kafka is not part of this workload). Each "
            "sensor is one client process with its own topic (stream) and a consumer of it in the same process. "
            "Medians of the runs; latencies are per-sensor percentiles, then the median (or the worst) over the "
            "sensors. See METHOD.md for what matches what.\n" % gateway[0]["workload"].rsplit(",", 1)[0],
            _gateway_table(gateway)]
    if validation:
        parts += [
            "## Record validation on produce\n",
            "What checking every record before it is stored (README: \"What Eddy checks before it stores a "
            "batch\") costs the broker: %s, acks=1, one librdkafka producer compressing with the codec shown. "
            "Throughput and broker CPU seconds per 10^9 bytes of message values; the share is (validating − "
            "not validating) ÷ validating. Uncompressed records are always walked (there is no switch); that row "
            "gives the walk's own cost, measured alone in this run by tests/bench/record_validation_bench.cc. "
            "Lower CPU per GB is better: Eddy ÷ Kafka below 1 means Eddy spends less.\n"
            % validation[0]["workload"].split(",")[0].replace("produce ", ""),
            _validation_table(validation)]
    parts += [
        "## Limits measured in this run\n", _limits_table(limits),
        "## The run's other reports\n", _other_reports(),
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
                   "rows": [{**{k: v.to_json() if hasattr(v, "to_json") else v
                                for k, v in r.items() if k not in ("eddy", "peers", "limit")},
                             "eddy": r["eddy"].to_json(),
                             "peers": {n: p.to_json() for n, p in r.get("peers", {}).items() if p is not None},
                             "ratios": dict(zip(("vs_peer", "vs_limit"), ratios(r))),
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
