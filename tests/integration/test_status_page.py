"""The status page (issue 18) in a real browser: Debian's chromium,
headless, loads / from an edge eddy whose link forwards to a second eddy
standing in for the central cluster. The central is stopped so that the
link builds a backlog; the page, after its script ran (--dump-dom with a
virtual time budget), must show the broker, the disk budget and the link's
backlog with the numbers /metrics and `eddy forward status` give, render a
client-chosen group id as text (no markup), and draw the backlog history.
A screenshot is kept: ARTIFACT_DIR/status_page.png.

usage: test_status_page.py ARTIFACT_DIR"""

import html.parser
import os
import shutil
import struct
import subprocess
import sys

import eddy_fixture
import forward_fixture as ff
import metrics_fixture as mf
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

TOPIC = "sensors"
XSS_GROUP = '<img src=x onerror="document.title=\'owned\'">'
FIRST, BACKLOG = 50, 300


class Dom(html.parser.HTMLParser):
    """The elements of interest in chromium's --dump-dom output."""

    def __init__(self):
        super().__init__()
        self.stack, self.by_id, self.links, self.groups, self.tags = [], {}, {}, [], []
        self.text = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        self.stack.append((tag, a))
        if "id" in a:
            self.by_id[a["id"]] = a
        if "data-link" in a:
            self.links[a["data-link"]] = {"attrs": a}
            self.current_link = a["data-link"]
        cls = a.get("class", "")
        if "backlog-messages" in cls:
            self.links[self.current_link]["backlog_messages"] = a.get("data-value")
        if "backlog-bytes" in cls:
            self.links[self.current_link]["backlog_bytes"] = a.get("data-value")
        if tag == "polyline":
            self.links[self.current_link]["points"] = a.get("points", "")
        if "data-group" in a:
            self.groups.append(a["data-group"])
        if tag == "td" and "data-value" in a and self.groups:
            self.text.setdefault("group_cells", []).append(a["data-value"])

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        for _tag, a in reversed(self.stack):
            if "id" in a:
                self.text[a["id"]] = self.text.get(a["id"], "") + data
                break


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def browser(args, url, timeout=60):
    base = [chromium(), "--headless", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage",
            "--no-first-run", "--hide-scrollbars", "--virtual-time-budget=8000"]
    return subprocess.run(base + args + [url], capture_output=True, timeout=timeout)


def produce(broker, count, start):
    p = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
    for i in range(start, start + count):
        p.send(TOPIC, value=b"reading %d" % i, partition=0)
    p.flush()
    p.close()


def build_backlog(checks, central, edge, port):
    ff.create_eddy_topic(edge, TOPIC, 1)
    produce(edge, FIRST, 0)
    ff.wait_drained(edge, TOPIC, 1, timeout=30)
    forwarded = sum(p["forwarded_messages"] for p in ff.forward_status(edge)["links"][0]["partitions"])
    checks.equal("the link forwarded to the central eddy", forwarded, FIRST)
    checks.equal("central eddy stops", central.stop(), 0)
    produce(edge, BACKLOG, FIRST)

    def backlog_seen_in_history():
        link = mf.status_json(port)["links"][0]
        return link["backlog_messages"] == BACKLOG and link["state"] != "connected" and \
            sum(1 for s in link["history"] if s[1] == BACKLOG) >= 3
    eddy_fixture.wait_until(backlog_seen_in_history, 30, "the backlog in the link's history")
    c = KafkaConsumer(bootstrap_servers=edge.bootstrap, group_id=XSS_GROUP, enable_auto_commit=False)
    c.assign([TopicPartition(TOPIC, 0)])
    c.commit({TopicPartition(TOPIC, 0): OffsetAndMetadata(FIRST, "")})
    c.close()


def check_page(checks, edge, port, dom):
    samples, _, _ = mf.scrape(port)
    status = ff.forward_status(edge)
    link_status = status["links"][0]
    checks.equal("page: version", dom.text.get("version"), mf.status_json(port)["broker"]["version"])
    checks.check("page: uptime and connections shown", dom.text.get("uptime") and dom.text.get("connections"))
    disk = dom.by_id.get("disk-text", {})
    checks.equal("page: disk used = /metrics", float(disk.get("data-used", -1)),
                 mf.value(samples, "eddy_disk_budget_used_bytes"))
    checks.equal("page: disk limit = eddy forward status", int(disk.get("data-limit", -1)),
                 status["disk_budget"]["limit_bytes"])
    width = dom.by_id.get("disk-fill", {}).get("style", "")
    checks.check("page: the disk bar has a width", "width:" in width.replace(" ", ""), width)
    link = dom.links.get("central", {})
    backlog = sum(p["backlog_messages"] for p in link_status["partitions"])
    checks.equal("eddy forward status: the backlog", backlog, BACKLOG)
    checks.equal("page: link backlog messages = eddy forward status", link.get("backlog_messages"), str(backlog))
    checks.equal("page: link backlog messages = /metrics", float(link.get("backlog_messages", -1)),
                 mf.total(samples, "eddy_link_backlog_messages", link="central"))
    checks.equal("page: link backlog bytes = /metrics", float(link.get("backlog_bytes", -1)),
                 mf.total(samples, "eddy_link_backlog_bytes", link="central"))
    points = link.get("points", "").split()
    checks.check("page: the backlog history is drawn (several points)", len(points) >= 4, points[:6])
    checks.check("page: the client-chosen group id is text, not markup",
                 XSS_GROUP in dom.groups and "img" not in dom.tags, dom.groups)
    checks.check("page: the group's lag is shown", str(FIRST + BACKLOG - FIRST) in dom.text.get("group_cells", []),
                 dom.text.get("group_cells"))


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


def main():
    artifact_dir = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    checks = eddy_fixture.Checks()
    if chromium() is None:
        print("chromium not installed (scripts/install-deps.sh host installs it)")
        sys.exit(1)
    with eddy_fixture.Broker() as central, eddy_fixture.Broker(overrides=dict(
            ff.edge_link_overrides("127.0.0.1:0", TOPIC, link="central"), **{
                "eddy.metrics.listener": "http://127.0.0.1:0", "eddy.metrics.history.sample.ms": "300",
                "eddy.disk.budget.bytes": str(256 << 20)})) as edge:
        central.start()
        edge.overrides["eddy.forward.central.bootstrap.servers"] = central.bootstrap
        edge.start()
        port = mf.metrics_port(edge)
        build_backlog(checks, central, edge, port)
        url = "http://127.0.0.1:%d/" % port
        r = browser(["--dump-dom"], url)
        checks.equal("chromium --dump-dom exits 0", r.returncode, 0)
        dom = Dom()
        dom.feed(r.stdout.decode("utf-8", "replace"))
        check_page(checks, edge, port, dom)
        os.makedirs(artifact_dir, exist_ok=True)
        shot = os.path.join(artifact_dir, "status_page.png")
        if os.path.exists(shot):
            os.remove(shot)
        r = browser(["--screenshot=" + shot, "--window-size=1000,1000"], url)
        checks.check("chromium --screenshot exits 0", r.returncode == 0, r.stderr[-300:])
        checks.equal("the screenshot is a 1000x1000 PNG", png_size(shot) if os.path.exists(shot) else None,
                     (1000, 1000))
        print("screenshot:", shot)
        checks.equal("edge stops cleanly", edge.stop(), 0)
    checks.finish()


if __name__ == "__main__":
    main()
