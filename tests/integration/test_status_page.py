"""The status page (issue 18) in a real browser: Debian's chromium,
headless, loads / from an edge eddy whose link forwards to a second eddy
standing in for the central cluster. The central is stopped so that the
link builds a backlog; the page, after its script ran (--dump-dom with a
virtual time budget), must show the broker, the disk budget and the link's
backlog with the numbers /metrics and `eddy forward status` give, render a
client-chosen group id as text (no markup), and draw the backlog history.
A screenshot is kept: ARTIFACT_DIR/status_page.png (--artifact-dir; the
current directory by default)."""

import html.parser
import os
import shutil
import struct
import subprocess

import pytest

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


def build_backlog(central, edge, port):
    ff.create_eddy_topic(edge, TOPIC, 1)
    produce(edge, FIRST, 0)
    ff.wait_drained(edge, TOPIC, 1, timeout=30)
    forwarded = sum(p["forwarded_messages"] for p in ff.forward_status(edge)["links"][0]["partitions"])
    assert forwarded == FIRST, "the link forwarded to the central eddy"
    assert central.stop() == 0, "central eddy stops"
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


def test_page_shows_the_status(page):
    edge, port, dom = page["edge"], page["port"], page["dom"]
    samples, _, _ = mf.scrape(port)
    status = ff.forward_status(edge)
    link_status = status["links"][0]
    assert dom.text.get("version") == mf.status_json(port)["broker"]["version"], "page: version"
    assert dom.text.get("uptime") and dom.text.get("connections"), "page: uptime and connections shown"
    disk = dom.by_id.get("disk-text", {})
    assert float(disk.get("data-used", -1)) == mf.value(samples, "eddy_disk_budget_used_bytes"), \
        "page: disk used = /metrics"
    assert int(disk.get("data-limit", -1)) == status["disk_budget"]["limit_bytes"], \
        "page: disk limit = eddy forward status"
    width = dom.by_id.get("disk-fill", {}).get("style", "")
    assert "width:" in width.replace(" ", ""), "page: the disk bar has a width: %r" % (width,)
    link = dom.links.get("central", {})
    backlog = sum(p["backlog_messages"] for p in link_status["partitions"])
    assert backlog == BACKLOG, "eddy forward status: the backlog"
    assert link.get("backlog_messages") == str(backlog), "page: link backlog messages = eddy forward status"
    assert float(link.get("backlog_messages", -1)) == mf.total(samples, "eddy_link_backlog_messages", link="central"), \
        "page: link backlog messages = /metrics"
    assert float(link.get("backlog_bytes", -1)) == mf.total(samples, "eddy_link_backlog_bytes", link="central"), \
        "page: link backlog bytes = /metrics"
    points = link.get("points", "").split()
    assert len(points) >= 4, "page: the backlog history is drawn (several points): %r" % (points[:6],)
    assert XSS_GROUP in dom.groups and "img" not in dom.tags, \
        "page: the client-chosen group id is text, not markup: %r" % (dom.groups,)
    assert str(FIRST + BACKLOG - FIRST) in dom.text.get("group_cells", []), \
        "page: the group's lag is shown: %r" % (dom.text.get("group_cells"),)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


@pytest.fixture(scope="module")
def page(eddy_factory):
    """An edge eddy with a backlog (its central eddy stopped), and its page
    as chromium rendered it: {edge, port, url, dom}."""
    if chromium() is None:
        pytest.fail("chromium not installed (scripts/install-deps.sh host installs it)")
    central = eddy_factory()
    edge = eddy_factory(dict(ff.edge_link_overrides(central.bootstrap, TOPIC, link="central"), **{
        "eddy.metrics.listener": "http://127.0.0.1:0", "eddy.metrics.history.sample.ms": "300",
        "eddy.disk.budget.bytes": str(256 << 20)}))
    port = mf.metrics_port(edge)
    build_backlog(central, edge, port)
    url = "http://127.0.0.1:%d/" % port
    r = browser(["--dump-dom"], url)
    assert r.returncode == 0, "chromium --dump-dom exits 0"
    dom = Dom()
    dom.feed(r.stdout.decode("utf-8", "replace"))
    return {"edge": edge, "port": port, "url": url, "dom": dom}


def test_screenshot(page, artifact_dir):
    shot = os.path.join(artifact_dir, "status_page.png")
    if os.path.exists(shot):
        os.remove(shot)
    r = browser(["--screenshot=" + shot, "--window-size=1000,1000"], page["url"])
    assert r.returncode == 0, "chromium --screenshot exits 0: %r" % (r.stderr[-300:],)
    assert os.path.exists(shot) and png_size(shot) == (1000, 1000), "the screenshot is a 1000x1000 PNG"
    print("screenshot:", shot)
