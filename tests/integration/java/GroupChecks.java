import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import java.util.function.Function;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Java consumer in groups (classic protocol): range and
 * cooperative-sticky assignors with two members sharing a topic's partitions
 * and a rebalance when one leaves; static membership (group.instance.id)
 * where a restart within the session timeout keeps the assignment without a
 * rebalance, and a static member that stays away loses its partitions after
 * the session timeout, and a second live consumer with the same instance id
 * fences the first; commitSync/commitAsync with metadata, committed() read
 * back, and a new member starting at the committed offsets;
 * subscribe(Pattern) picking up a topic created later.
 *
 * Usage: GroupChecks BOOTSTRAP [section...] (sections: range cooperative
 * static commit fencing pattern; default all).
 */
public class GroupChecks {
    static String bootstrap;
    static final Checks checks = new Checks("");
    static final Duration REBALANCE = Duration.ofSeconds(30);

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        Set<String> only = new HashSet<>(Arrays.asList(args).subList(1, args.length));
        try (Admin admin = Admin.create(Checks.props(bootstrap))) {
            checks.noException("admin creates the group topics", () -> admin.createTopics(List.of(
                new NewTopic("grp-range", 4, (short) 1), new NewTopic("grp-coop", 4, (short) 1),
                new NewTopic("grp-static", 4, (short) 1), new NewTopic("grp-commit", 2, (short) 1),
                new NewTopic("grp-fence", 2, (short) 1), new NewTopic("grp-pattern-a", 2, (short) 1))).all().get());
        }
        if (only.isEmpty() || only.contains("range"))
            checks.section("range", () -> sharing("range", "grp-range", RangeAssignor.class.getName(), false));
        if (only.isEmpty() || only.contains("cooperative"))
            checks.section("cooperative-sticky", () -> sharing("cooperative", "grp-coop",
                                                               CooperativeStickyAssignor.class.getName(), true));
        if (only.isEmpty() || only.contains("static")) checks.section("static membership", GroupChecks::staticMembership);
        if (only.isEmpty() || only.contains("commit")) checks.section("commits", GroupChecks::commits);
        if (only.isEmpty() || only.contains("fencing")) checks.section("static fencing", GroupChecks::fencing);
        if (only.isEmpty() || only.contains("pattern")) checks.section("pattern subscription", GroupChecks::pattern);
        System.exit(checks.finish());
    }

    // ------------------------------------------------------------------ helpers

    static KafkaProducer<String, String> producer() {
        return new KafkaProducer<>(Checks.props(bootstrap, "acks", "all", "linger.ms", "5",
            "key.serializer", StringSerializer.class.getName(), "value.serializer", StringSerializer.class.getName()));
    }

    /** count records per partition of topic, values "topic-p-i" with i from start. */
    static void produce(String topic, int partitions, int start, int perPartition) throws Exception {
        try (KafkaProducer<String, String> p = producer()) {
            List<Future<?>> fs = new ArrayList<>();
            for (int i = start; i < start + perPartition; i++) {
                for (int part = 0; part < partitions; part++) {
                    fs.add(p.send(new ProducerRecord<>(topic, part, null, topic + "-" + part + "-" + i)));
                }
            }
            for (Future<?> f : fs) f.get();
        }
    }

    static Properties consumerProps(String group, String clientId, String... extra) {
        List<String> kv = new ArrayList<>(List.of(
            "group.id", group, "client.id", clientId,
            "key.deserializer", StringDeserializer.class.getName(),
            "value.deserializer", StringDeserializer.class.getName(),
            "auto.offset.reset", "earliest", "enable.auto.commit", "false",
            "session.timeout.ms", "30000", "heartbeat.interval.ms", "500",
            "request.timeout.ms", "15000", "default.api.timeout.ms", "20000"));
        kv.addAll(List.of(extra));
        return Checks.props(bootstrap, kv.toArray(new String[0]));
    }

    static String tps(Collection<TopicPartition> s) {
        List<Integer> ps = new ArrayList<>();
        for (TopicPartition tp : s) ps.add(tp.partition());
        Collections.sort(ps);
        return ps.toString();
    }

    /** A group member: a KafkaConsumer on its own thread, polling every
     * 100 ms, committing synchronously after each poll that returned
     * records and in onPartitionsRevoked (at-least-once done right: each
     * record is consumed once across clean rebalances). */
    static final class Member implements ConsumerRebalanceListener {
        final String name;
        final KafkaConsumer<String, String> consumer;
        final Thread thread;
        final BlockingQueue<Runnable> tasks = new LinkedBlockingQueue<>();
        final List<String> events = Collections.synchronizedList(new ArrayList<>());
        final List<String> consumed = Collections.synchronizedList(new ArrayList<>());
        volatile Set<TopicPartition> assignment = Set.of();
        volatile int generation = -1;
        volatile String memberId = "";
        volatile long loops = 0;
        volatile Throwable error;
        volatile boolean stop;
        volatile CloseOptions closeOptions = null;

        Member(String name, Properties props, String topic) {
            this.name = name;
            this.consumer = new KafkaConsumer<>(props);
            this.thread = new Thread(() -> loop(topic), name);
            thread.setDaemon(true);
            thread.start();
        }

        private void loop(String topic) {
            try {
                consumer.subscribe(List.of(topic), this);
                while (!stop) {
                    ConsumerRecords<String, String> rs = consumer.poll(Duration.ofMillis(100));
                    for (ConsumerRecord<String, String> r : rs) consumed.add(r.value());
                    if (!rs.isEmpty()) consumer.commitSync();
                    assignment = Set.copyOf(consumer.assignment());
                    ConsumerGroupMetadata gm = consumer.groupMetadata();
                    generation = gm.generationId();
                    memberId = gm.memberId();
                    Runnable t;
                    while ((t = tasks.poll()) != null) t.run();
                    loops++;
                }
            } catch (Throwable t) {
                error = t;
                events.add("error " + t);
            } finally {
                try {
                    if (closeOptions != null) consumer.close(closeOptions);
                    else consumer.close(CloseOptions.timeout(Duration.ofSeconds(10)));
                } catch (Throwable t) {
                    events.add("close error " + t);
                }
            }
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            events.add("revoked " + tps(partitions));
            if (!partitions.isEmpty()) consumer.commitSync();
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            events.add("assigned " + tps(partitions));
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            events.add("lost " + tps(partitions));
        }

        /** Runs f on the consumer's thread (between polls). */
        <T> T call(Function<KafkaConsumer<String, String>, T> f) throws Exception {
            CompletableFuture<T> result = new CompletableFuture<>();
            tasks.add(() -> {
                try {
                    result.complete(f.apply(consumer));
                } catch (Throwable t) {
                    result.completeExceptionally(t);
                }
            });
            return result.get(30, TimeUnit.SECONDS);
        }

        double metric(String group, String metricName) throws Exception {
            return call(c -> {
                for (Map.Entry<MetricName, ? extends Metric> e : c.metrics().entrySet()) {
                    if (e.getKey().group().equals(group) && e.getKey().name().equals(metricName)) {
                        return ((Number) e.getValue().metricValue()).doubleValue();
                    }
                }
                return Double.NaN;
            });
        }

        List<String> eventsSnapshot() {
            synchronized (events) {
                return new ArrayList<>(events);
            }
        }

        void close(CloseOptions options) throws InterruptedException {
            closeOptions = options;
            stop = true;
            thread.join(30_000);
        }

        void close() throws InterruptedException {
            close(null);
        }
    }

    static boolean waitFor(Duration d, java.util.function.BooleanSupplier cond) throws InterruptedException {
        return Checks.waitUntil(d, cond);
    }

    static Set<Integer> parts(Set<TopicPartition> s) {
        Set<Integer> out = new TreeSet<>();
        for (TopicPartition tp : s) out.add(tp.partition());
        return out;
    }

    static String state(Member... ms) {
        StringBuilder sb = new StringBuilder();
        for (Member m : ms) {
            sb.append(m.name).append(" gen=").append(m.generation).append(" has ").append(parts(m.assignment))
              .append(" events ").append(m.eventsSnapshot()).append("; ");
        }
        return sb.toString();
    }

    /** Every value of produce(topic, partitions, 0, total) consumed exactly once across members. */
    static void consumedOnce(String n, String topic, int partitions, int perPartition, Member... ms)
            throws InterruptedException {
        int want = partitions * perPartition;
        waitFor(REBALANCE, () -> {
            int c = 0;
            for (Member m : ms) c += m.consumed.size();
            return c >= want;
        });
        List<String> all = new ArrayList<>();
        for (Member m : ms) {
            synchronized (m.consumed) {
                all.addAll(m.consumed);
            }
        }
        Set<String> distinct = new HashSet<>(all);
        checks.equal(n + "every record consumed (distinct values)", distinct.size(), want);
        checks.equal(n + "no record consumed twice", all.size() - distinct.size(), 0);
    }

    // ------------------------------------------------------------------ scenarios

    /** Two members sharing 4 partitions; the second one leaves. */
    static void sharing(String label, String topic, String assignor, boolean cooperative) throws Exception {
        String n = label + " ";
        String group = "g-" + label;
        produce(topic, 4, 0, 10);
        Member m1 = new Member(label + "-1", consumerProps(group, label + "-1",
            "partition.assignment.strategy", assignor), topic);
        Member m2 = null;
        try {
            boolean ok = waitFor(REBALANCE, () -> m1.assignment.size() == 4);
            checks.check(n + "a lone member gets all 4 partitions", ok, state(m1));
            if (!ok) return;
            int gen1 = m1.generation;
            int before = m1.eventsSnapshot().size();
            m2 = new Member(label + "-2", consumerProps(group, label + "-2",
                "partition.assignment.strategy", assignor), topic);
            Member second = m2;
            ok = waitFor(REBALANCE, () -> m1.assignment.size() == 2 && second.assignment.size() == 2
                && second.generation == m1.generation);
            checks.check(n + "a second member joins: 2 partitions each", ok, state(m1, second));
            Set<Integer> union = new TreeSet<>(parts(m1.assignment));
            union.addAll(parts(m2.assignment));
            checks.equal(n + "the two assignments cover all partitions", union, Set.of(0, 1, 2, 3));
            checks.check(n + "the generation grows with the rebalance", m1.generation > gen1,
                         "before " + gen1 + " after " + m1.generation);
            List<String> ev = m1.eventsSnapshot().subList(before, m1.eventsSnapshot().size());
            if (cooperative) {
                // Cooperative: the first member gives up exactly the 2 partitions that move and keeps
                // the other two throughout (they are never revoked).
                List<String> revokes = new ArrayList<>();
                for (String e : ev) if (e.startsWith("revoked") && !e.equals("revoked []")) revokes.add(e);
                Set<Integer> kept = parts(m1.assignment), moved = parts(m2.assignment);
                checks.check(n + "the first member revokes once, only the partitions that move to the second",
                             revokes.equals(List.of("revoked " + moved)), "events " + ev + ", second has " + moved);
                checks.check(n + "the first member keeps 2 partitions it had, never revoked",
                             kept.size() == 2 && Collections.disjoint(kept, moved)
                             && ev.stream().noneMatch(e -> e.startsWith("revoked") && parts(m1.assignment).stream().anyMatch(k -> e.matches(".*\\b" + k + "\\b.*"))),
                             "events " + ev + ", keeps " + kept);
                checks.check(n + "nothing lost in the rebalance", ev.stream().noneMatch(e -> e.startsWith("lost")), ev);
            } else {
                // Eager: everything is revoked, then range hands out contiguous halves.
                checks.check(n + "eager rebalance: the first member revoked all 4 partitions",
                             ev.contains("revoked [0, 1, 2, 3]"), ev);
                Set<Integer> a = parts(m1.assignment), b = parts(m2.assignment);
                checks.check(n + "range gives contiguous halves",
                             (a.equals(Set.of(0, 1)) && b.equals(Set.of(2, 3))) || (a.equals(Set.of(2, 3)) && b.equals(Set.of(0, 1))),
                             a + " / " + b);
            }
            // Records produced while two members share the topic are split between them.
            produce(topic, 4, 10, 10);
            Member mm2 = m2;
            ok = waitFor(REBALANCE, () -> m1.consumed.size() + mm2.consumed.size() >= 80);
            checks.check(n + "both members consume their partitions' new records", ok && mm2.consumed.size() >= 20,
                         "consumed " + m1.consumed.size() + " + " + mm2.consumed.size());
            int mark = m1.eventsSnapshot().size();
            int gen2 = m1.generation;
            long t0 = System.nanoTime();
            m2.close();  // a dynamic member sends LeaveGroup
            checks.check(n + "the leaving member closed cleanly", m2.error == null
                         && m2.eventsSnapshot().stream().noneMatch(e -> e.startsWith("close error")), m2.eventsSnapshot());
            ok = waitFor(REBALANCE, () -> m1.assignment.size() == 4 && m1.generation > gen2);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            checks.check(n + "after the second member leaves the first has all 4 again", ok, state(m1));
            checks.check(n + "LeaveGroup rebalances at once (not after the 30 s session timeout)", ok && ms < 15_000,
                         ms + " ms");
            List<String> ev2 = m1.eventsSnapshot().subList(mark, m1.eventsSnapshot().size());
            if (cooperative) {
                checks.check(n + "taking over the partitions revokes nothing",
                             ev2.stream().noneMatch(e -> e.startsWith("revoked") && !e.equals("revoked []")) && ev2.stream().noneMatch(e -> e.startsWith("lost")), ev2);
            }
            produce(topic, 4, 20, 5);
            consumedOnce(n, topic, 4, 25, m1, m2);
            checks.check(n + "no consumer error", m1.error == null && m2.error == null, state(m1, m2));
        } finally {
            m1.close();
            if (m2 != null && m2.thread.isAlive()) m2.close();
        }
    }

    /** A second live consumer with a static member's group.instance.id takes its place; the older one is
     * fenced (FencedInstanceIdException out of poll). */
    static void fencing() throws Exception {
        String topic = "grp-fence", group = "g-fence", n = "fencing ";
        String[] session = {"session.timeout.ms", "10000", "heartbeat.interval.ms", "300"};
        Member old = new Member("fence-old", consumerProps(group, "fence-old", concat(session, "group.instance.id", "fenced")), topic);
        Member young = null;
        try {
            boolean ok = waitFor(REBALANCE, () -> old.assignment.size() == 2);
            checks.check(n + "the first static member gets both partitions", ok, state(old));
            if (!ok) return;
            Member y = new Member("fence-new", consumerProps(group, "fence-new", concat(session, "group.instance.id", "fenced")), topic);
            young = y;
            ok = waitFor(REBALANCE, () -> y.assignment.size() == 2);
            checks.check(n + "a second consumer with the same group.instance.id gets its partitions", ok, state(old, y));
            ok = waitFor(REBALANCE, () -> old.error != null);
            checks.check(n + "the older consumer is fenced: FencedInstanceIdException",
                         ok && old.error instanceof org.apache.kafka.common.errors.FencedInstanceIdException,
                         old.error == null ? "no error; " + state(old, y) : Checks.describe(old.error));
            checks.check(n + "the newer one keeps consuming without error", y.error == null, state(y));
        } finally {
            old.close();
            if (young != null) young.close();
        }
    }

    /** subscribe(Pattern): a topic created later that matches is picked up. */
    static void pattern() throws Exception {
        String group = "g-pattern", n = "pattern ";
        produce("grp-pattern-a", 2, 0, 3);
        KafkaConsumer<String, String> c = new KafkaConsumer<>(consumerProps(group, "pattern", "metadata.max.age.ms", "500"));
        try {
            c.subscribe(java.util.regex.Pattern.compile("grp-pattern-.*"));
            Set<String> values = new HashSet<>();
            long deadline = System.nanoTime() + REBALANCE.toNanos();
            while (values.size() < 6 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) values.add(r.value());
            }
            checks.equal(n + "the matching topic's records", values.size(), 6);
            try (Admin admin = Admin.create(Checks.props(bootstrap))) {
                admin.createTopics(List.of(new NewTopic("grp-pattern-b", 1, (short) 1))).all().get();
            }
            produce("grp-pattern-b", 1, 0, 4);
            deadline = System.nanoTime() + REBALANCE.toNanos();
            while (values.size() < 10 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) values.add(r.value());
            }
            checks.check(n + "a topic created later that matches is assigned and read",
                         values.size() == 10 && c.assignment().contains(new TopicPartition("grp-pattern-b", 0)),
                         values.size() + " values, assignment " + c.assignment());
        } finally {
            c.close(Duration.ofSeconds(10));
        }
    }

    static void staticMembership() throws Exception {
        String topic = "grp-static", group = "g-static";
        String n = "static ";
        produce(topic, 4, 0, 5);
        String[] session = {"session.timeout.ms", "20000", "heartbeat.interval.ms", "500"};
        Member s1 = new Member("static-1", consumerProps(group, "static-1", concat(session, "group.instance.id", "instance-1")), topic);
        Member s2 = new Member("static-2", consumerProps(group, "static-2", concat(session, "group.instance.id", "instance-2")), topic);
        Member s2b = null;
        try {
            boolean ok = waitFor(REBALANCE, () -> s1.assignment.size() == 2 && s2.assignment.size() == 2
                && s1.generation == s2.generation);
            checks.check(n + "two static members: 2 partitions each", ok, state(s1, s2));
            if (!ok) return;
            try (Admin admin = Admin.create(Checks.props(bootstrap))) {
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                Set<String> instances = new TreeSet<>();
                for (MemberDescription m : d.members()) instances.add(m.groupInstanceId().orElse("none"));
                checks.equal(n + "describeConsumerGroups shows the group.instance.ids", instances,
                             new TreeSet<>(Set.of("instance-1", "instance-2")));
            }
            Set<TopicPartition> s2parts = s2.assignment;
            int gen = s1.generation;
            String oldMemberId = s2.memberId;
            int s1Events = s1.eventsSnapshot().size();
            s2.close();  // static members do not leave the group on close
            checks.check(n + "the static member closed cleanly", s2.error == null
                         && s2.eventsSnapshot().stream().noneMatch(e -> e.startsWith("close error")), s2.eventsSnapshot());
            long t0 = System.nanoTime();
            Member restarted = new Member("static-2b", consumerProps(group, "static-2b",
                concat(session, "group.instance.id", "instance-2")), topic);
            s2b = restarted;
            ok = waitFor(REBALANCE, () -> !restarted.assignment.isEmpty());
            long ms = (System.nanoTime() - t0) / 1_000_000;
            checks.check(n + "the restarted member (same group.instance.id) gets an assignment within the session timeout",
                         ok && ms < 20_000, ms + " ms; " + state(s1, restarted));
            checks.equal(n + "it gets the same partitions as before", parts(restarted.assignment), parts(s2parts));
            checks.equal(n + "the generation does not change", restarted.generation, gen);
            checks.check(n + "it has a new member id", !restarted.memberId.isEmpty() && !restarted.memberId.equals(oldMemberId),
                         "old " + oldMemberId + " new " + restarted.memberId);
            // The other member must see no rebalance: let it heartbeat twice more (a rebalance would
            // answer a heartbeat with REBALANCE_IN_PROGRESS) and finish a poll after that.
            double hb = s1.metric("consumer-coordinator-metrics", "heartbeat-total");
            boolean beat = waitFor(Duration.ofSeconds(15), () -> {
                try {
                    return s1.metric("consumer-coordinator-metrics", "heartbeat-total") >= hb + 2;
                } catch (Exception e) {
                    return false;
                }
            });
            long loops = s1.loops;
            waitFor(Duration.ofSeconds(5), () -> s1.loops > loops + 1);
            checks.check(n + "the other member keeps heartbeating", beat, "heartbeat-total " + hb);
            List<String> after = s1.eventsSnapshot().subList(s1Events, s1.eventsSnapshot().size());
            checks.check(n + "the other member sees no rebalance (no revoke/assign)", after.isEmpty() && s1.generation == gen,
                         "events " + after + " generation " + s1.generation + " (was " + gen + ")");
            produce(topic, 4, 5, 5);
            consumedOnce(n, topic, 4, 10, s1, s2, restarted);

            // A static member that does not come back loses its partitions after session.timeout.ms
            // (and not before: closing it sends no LeaveGroup).
            int gen3 = s1.generation;
            restarted.close();
            long t1 = System.nanoTime();
            ok = waitFor(Duration.ofSeconds(40), () -> s1.assignment.size() == 4 && s1.generation > gen3);
            long gone = (System.nanoTime() - t1) / 1_000_000;
            checks.check(n + "a static member that stays away: its partitions move to the other member", ok, state(s1));
            checks.check(n + "that happens after the session timeout (close sent no LeaveGroup)", gone >= 10_000,
                         gone + " ms after close (session.timeout.ms=20000)");
            checks.check(n + "no consumer error", s1.error == null && s2.error == null && restarted.error == null,
                         state(s1, s2, restarted));
        } finally {
            s1.close();
            if (s2.thread.isAlive()) s2.close();
            if (s2b != null && s2b.thread.isAlive()) s2b.close();
        }
    }

    static String[] concat(String[] a, String... b) {
        String[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    static void commits() throws Exception {
        String topic = "grp-commit", group = "g-commit";
        String n = "commit ";
        produce(topic, 2, 0, 20);
        TopicPartition p0 = new TopicPartition(topic, 0), p1 = new TopicPartition(topic, 1);
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(consumerProps(group, "committer"))) {
            c.subscribe(List.of(topic));
            int got = 0;
            long deadline = System.nanoTime() + REBALANCE.toNanos();
            while (got < 40 && System.nanoTime() < deadline) got += c.poll(Duration.ofMillis(100)).count();
            checks.equal(n + "the member consumed both partitions", got, 40);
            checks.equal(n + "committed() before any commit is null", c.committed(Set.of(p0, p1)).get(p0), null);

            c.commitSync(Map.of(p0, new OffsetAndMetadata(5, "meta-five"), p1, new OffsetAndMetadata(7)));
            Map<TopicPartition, OffsetAndMetadata> cm = c.committed(Set.of(p0, p1));
            checks.check(n + "commitSync with metadata, committed() reads it back",
                         cm.get(p0) != null && cm.get(p0).offset() == 5 && "meta-five".equals(cm.get(p0).metadata())
                         && cm.get(p1) != null && cm.get(p1).offset() == 7, cm);

            CompletableFuture<Exception> done = new CompletableFuture<>();
            c.commitAsync(Map.of(p0, new OffsetAndMetadata(11, "async-meta")), (offsets, e) -> done.complete(e));
            deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (!done.isDone() && System.nanoTime() < deadline) c.poll(Duration.ofMillis(50));
            checks.check(n + "commitAsync callback without error", done.isDone() && done.getNow(null) == null,
                         done.isDone() ? done.getNow(null) : "callback not called");
            cm = c.committed(Set.of(p0));
            checks.check(n + "commitAsync offset and metadata read back", cm.get(p0) != null && cm.get(p0).offset() == 11
                         && "async-meta".equals(cm.get(p0).metadata()), cm);

            c.commitSync();  // the consumed positions
            cm = c.committed(Set.of(p0, p1));
            checks.check(n + "commitSync() commits the positions", cm.get(p0) != null && cm.get(p0).offset() == 20
                         && cm.get(p1) != null && cm.get(p1).offset() == 20, cm);

            c.seek(p0, 3);
            checks.equal(n + "position after seek in a group", c.position(p0), 3L);
            c.commitSync(Map.of(p0, new OffsetAndMetadata(c.position(p0))));
            CompletableFuture<Exception> asyncNoArg = new CompletableFuture<>();
            c.commitAsync((offsets, e) -> asyncNoArg.complete(e));
            deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (!asyncNoArg.isDone() && System.nanoTime() < deadline) c.poll(Duration.ofMillis(50));
            // poll() after the seek re-reads partition 0 from 3, so the positions are 20 and 20 again
            cm = c.committed(Set.of(p0, p1));
            checks.check(n + "commitAsync() (positions) completes", asyncNoArg.isDone() && asyncNoArg.getNow(null) == null,
                         asyncNoArg.isDone() ? asyncNoArg.getNow(null) : "callback not called");
            c.commitSync(Map.of(p0, new OffsetAndMetadata(3), p1, new OffsetAndMetadata(15)));
        }
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(consumerProps(group, "successor"))) {
            c.subscribe(List.of(topic));
            Map<Integer, Long> first = new TreeMap<>();
            long deadline = System.nanoTime() + REBALANCE.toNanos();
            while (first.size() < 2 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) first.putIfAbsent(r.partition(), r.offset());
            }
            checks.equal(n + "a new member of the group starts at the committed offsets", first, Map.of(0, 3L, 1, 15L));
        }
    }
}
