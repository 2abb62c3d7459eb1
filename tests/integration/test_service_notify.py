"""Readiness as systemd's Type=notify sees it (port::notify_service_manager,
app/service_manager.h): a unix datagram socket stands in for systemd, its
name goes to eddy in NOTIFY_SOCKET, and the real eddy is started.

- READY=1 is the first datagram, and it arrives only when the Kafka port
  already accepts connections and answers requests: the moment it is
  received, a connection to the (pre-chosen) port is opened and an
  ApiVersions request answered, and the topics of the data directory are
  loaded (a record produced before a restart is fetched at once). STATUS=
  names the listener.
- SIGTERM: STOPPING=1 arrives, then eddy exits 0.
- The abstract namespace ('@name') works the same way.
- A NOTIFY_SOCKET nobody listens on is logged, and eddy serves anyway."""

import os
import signal
import socket
import threading

import kafka_wire as w


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def notify_listener(name):
    """A datagram socket bound where systemd would listen; name as in
    NOTIFY_SOCKET ('@' for the abstract namespace)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind("\0" + name[1:] if name.startswith("@") else name)
    s.settimeout(30)
    return s


def start_in_background(broker, port):
    """Starts the broker on port from another thread (Broker.start waits for
    the port itself); returns the thread and a list that receives the
    start's exception, if any."""
    errors = []

    def run():
        try:
            broker.start(port=port)
        except Exception as e:  # noqa: BLE001 - reported by the caller
            errors.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, errors


def serves_now(port, topic):
    """What a client sees right now: ApiVersions' error code, and the
    values of `topic` partition 0 (None when the topic is not loaded)."""
    from kafka.protocol.admin import ApiVersionResponse
    with w.Connection(port, timeout=5) as conn:
        versions = conn.request(18, 0, b"", response_class=ApiVersionResponse[0])
        code, _high_watermark, data = w.fetch(conn, topic, 0, 0)
        values = None if code != 0 else [
            v for _b, _l, batch in w.parse_batches(data) for _o, _k, v, _h in w.parse_records(batch)]
        return versions.error_code, values


def ready_when_serving(broker, name, label, topic=None):
    """Starts broker with NOTIFY_SOCKET=name on a free port; checks that the
    first datagram is READY=1 and that at that moment the port serves (and
    topic holds b'before-restart', when given)."""
    port = free_port()
    listener = notify_listener(name)
    broker.env["NOTIFY_SOCKET"] = name
    thread, errors = start_in_background(broker, port)
    try:
        datagram = listener.recv(4096)
        error_code, values = serves_now(port, topic or "service-notify")
    except (OSError, w.Closed) as e:
        datagram, error_code, values = b"", None, "%s: %s" % (type(e).__name__, e)
    thread.join()
    if errors:
        raise errors[0]
    lines = datagram.decode("utf-8", "replace").split("\n")
    assert lines[0] == "READY=1", "%s: the first datagram is READY=1" % label
    assert lines[1:] == ["STATUS=serving on PLAINTEXT://127.0.0.1:%d" % port], "%s: STATUS names the listener" % label
    assert error_code == 0, "%s: at READY=1 the port answers ApiVersions (%s)" % (label, values)
    if topic is not None:
        assert values == [b"before-restart"], "%s: at READY=1 the topics are loaded" % label
    return listener


def test_path_socket_ready_when_serving_and_stopping(eddy_factory):
    broker = eddy_factory()
    # A topic with one record, so that the next start has one to load.
    with w.Connection(broker.port) as conn:
        conn.request(19, 1, w.create_topics_v1("loaded"))
        code, _offset = w.produce(conn, "loaded", 0, w.record_batch([(None, b"before-restart", ())]))
        assert code == 0, "produce before the restart"
    assert broker.stop() == 0, "first start stops cleanly"

    listener = ready_when_serving(broker, os.path.join(broker.tmp, "notify"), "path socket", topic="loaded")
    os.kill(broker.eddy_pid(), signal.SIGTERM)
    stopping = listener.recv(4096).decode("utf-8", "replace").split("\n")
    assert stopping[0] == "STOPPING=1", "SIGTERM: STOPPING=1 is sent"
    assert broker.stop(sig=0) == 0, "SIGTERM: then eddy exits 0"
    listener.close()


def test_abstract_namespace(eddy_factory):
    broker = eddy_factory(start=False)
    listener = ready_when_serving(broker, "@eddy-it-notify-%d" % os.getpid(), "abstract namespace")
    listener.close()
    assert broker.stop() == 0, "abstract namespace: stops cleanly"


def test_nobody_listening(eddy_factory):
    broker = eddy_factory(start=False)
    broker.env["NOTIFY_SOCKET"] = os.path.join(broker.tmp, "nobody-listens")
    broker.start()
    # Only the log can tell: readiness is not reported anywhere else.
    assert b"cannot notify the service manager (NOTIFY_SOCKET) of READY=1" in broker.log_bytes(), \
        "a NOTIFY_SOCKET nobody listens on is logged"
    assert serves_now(broker.port, "t")[0] == 0, "and eddy serves anyway"
    assert broker.stop() == 0, "and stops cleanly"
