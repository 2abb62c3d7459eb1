// Kafka's own Java clients (kafka-clients, on kafka_fixture.classpath())
// writing and reading numbered messages on a replicated topic while the
// test kills a partition's leader (issue 16). Run by
// tests/integration/test_cluster_replication.py and
// tests/bench/replication_bench.py:
//
//   ReplicatedNumbers numbers BOOTSTRAP TOPIC PARTITIONS COUNT RATE GROUP OUTDIR
//       an idempotent acks=all producer (enable.idempotence=true, at most 5
//       requests in flight) sends the numbers 0 .. COUNT-1 (value: the number
//       in decimal, no key) to partition number % PARTITIONS, RATE a second,
//       while a member of GROUP (subscribe, classic protocol, commitSync
//       after every poll that returned records) reads the topic. The consumer
//       stops once the producer is done and it has read every acknowledged
//       offset, or EDDY_CHECK_TIMEOUT_MS (default 60000) after the start.
//       OUTDIR/produced.txt, a line per send:
//           d N PARTITION OFFSET SEND_NS ACK_NS   acknowledged
//           f N PARTITION ERROR SEND_NS ACK_NS    failed
//       OUTDIR/consumed.txt, a line per event:
//           m PARTITION OFFSET VALUE T        a record
//           a T P,P,...   r T ...   l T ...    assigned / revoked / lost
//           c T P:NEXT,P:NEXT,...              committed (commitSync returned)
//           e T WHAT EXCEPTION                 a failed commit or poll
//       stdout: "first-ack T" when the first acknowledgement arrives and
//       "assigned T" when the consumer is first given partitions (the test
//       kills a leader after both), then one JSON line with the totals.
//   ReplicatedNumbers latency BOOTSTRAP TOPIC RATE SECONDS SIZE
//       the same producer (linger.ms=0) sends RATE messages of SIZE bytes a
//       second for SECONDS to partition 0, each timed from its send() call
//       to its acknowledgement; prints "started T" once the topic's metadata
//       is known and the sends begin, then the line rdkafka_bench's latency
//       run prints, with the longest gap between two acknowledgements added:
//       "latency msgs=N p50_us=A p99_us=B p999_us=C max_us=D errors=E
//        gap_us=G gap_start_ns=S gap_end_ns=F"
//
// T and the _NS times are System.nanoTime(), which on Linux is
// CLOCK_MONOTONIC: the clock of Python's time.monotonic() (in seconds there).
// Exit code 0 when every message was acknowledged (numbers: and the consumer
// read every acknowledged offset), 1 when not, 2 on a usage error.

import java.io.BufferedWriter;
import java.io.FileWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class ReplicatedNumbers {
    public static void main(String[] args) throws Exception {
        if (args.length == 8 && args[0].equals("numbers")) {
            System.exit(numbers(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                                Integer.parseInt(args[5]), args[6], args[7]));
        }
        if (args.length == 6 && args[0].equals("latency")) {
            System.exit(latency(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                                Integer.parseInt(args[5])));
        }
        System.err.println("usage: ReplicatedNumbers numbers BOOTSTRAP TOPIC PARTITIONS COUNT RATE GROUP OUTDIR"
                           + " | latency BOOTSTRAP TOPIC RATE SECONDS SIZE");
        System.exit(2);
    }

    static KafkaProducer<byte[], byte[]> producer(String bootstrap, String lingerMs) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "eddy-replicated-producer");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
        p.put(ProducerConfig.LINGER_MS_CONFIG, lingerMs);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return new KafkaProducer<>(p);
    }

    /** Sleeps (never spins: two cores run the brokers too) until nanoTime reads due. */
    static void sleepUntil(long due) {
        for (long left = due - System.nanoTime(); left > 0; left = due - System.nanoTime()) LockSupport.parkNanos(left);
    }

    // ------------------------------------------------------------------ numbers

    static int numbers(String bootstrap, String topic, int partitions, int count, int rate, String group, String outDir)
            throws Exception {
        long timeoutMs = Long.parseLong(System.getenv().getOrDefault("EDDY_CHECK_TIMEOUT_MS", "60000"));
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        // Acknowledged offsets not yet read by the consumer; the producer adds, the consumer removes.
        Set<Long> unread = ConcurrentHashMap.newKeySet();
        Set<Long> read = ConcurrentHashMap.newKeySet();
        AtomicBoolean producerDone = new AtomicBoolean(false);
        AtomicLong consumed = new AtomicLong(), commitErrors = new AtomicLong(), pollErrors = new AtomicLong();
        AtomicLong assignments = new AtomicLong();
        Thread reader = new Thread(() -> {
            try {
                consume(bootstrap, topic, group, outDir, deadline, unread, read, producerDone, consumed, commitErrors,
                        pollErrors, assignments);
            } catch (Exception e) {
                e.printStackTrace();
            }
        }, "group-consumer");
        reader.start();

        long[] acked = {0}, failed = {0};
        List<String> lines = new ArrayList<>(count);
        AtomicBoolean first = new AtomicBoolean(true);
        long sent = 0;
        try (KafkaProducer<byte[], byte[]> producer = producer(bootstrap, "5")) {
            producer.partitionsFor(topic);
            long start = System.nanoTime(), interval = 1_000_000_000L / rate;
            for (int n = 0; n < count; n++) {
                sleepUntil(start + n * interval);
                final int number = n;
                final int partition = n % partitions;
                final long sendNs = System.nanoTime();
                producer.send(new ProducerRecord<>(topic, partition, null,
                                                   Integer.toString(n).getBytes(StandardCharsets.US_ASCII)),
                              (md, e) -> {
                    long ackNs = System.nanoTime();
                    synchronized (lines) {
                        if (e == null) {
                            acked[0]++;
                            unread.add(key(partition, md.offset()));
                            lines.add("d " + number + " " + partition + " " + md.offset() + " " + sendNs + " " + ackNs);
                        } else {
                            failed[0]++;
                            lines.add("f " + number + " " + partition + " " + e.getClass().getSimpleName() + " " + sendNs
                                      + " " + ackNs + " " + oneLine(e.getMessage()));
                        }
                    }
                    if (e == null && first.getAndSet(false)) {
                        System.out.println("first-ack " + ackNs);
                        System.out.flush();
                    }
                });
                sent++;
            }
            producer.flush();
        }
        // Offsets the consumer read before the producer's callback added them.
        unread.removeAll(read);
        producerDone.set(true);
        reader.join();
        try (BufferedWriter out = new BufferedWriter(new FileWriter(Paths.get(outDir, "produced.txt").toFile()))) {
            synchronized (lines) {
                for (String line : lines) out.write(line + "\n");
            }
        }
        boolean complete = unread.isEmpty();
        System.out.println("{\"sent\": " + sent + ", \"acked\": " + acked[0] + ", \"failed\": " + failed[0]
                           + ", \"consumed\": " + consumed.get() + ", \"unread_acked\": " + unread.size()
                           + ", \"assignments\": " + assignments.get() + ", \"commit_errors\": " + commitErrors.get()
                           + ", \"poll_errors\": " + pollErrors.get() + ", \"complete\": " + complete + "}");
        return acked[0] == count && complete ? 0 : 1;
    }

    static long key(int partition, long offset) {
        return ((long) partition << 48) | offset;
    }

    static String oneLine(String s) {
        return s == null ? "" : s.replace('\n', ' ');
    }

    static String partitionList(Collection<TopicPartition> tps) {
        StringBuilder s = new StringBuilder();
        for (TopicPartition tp : tps) s.append(s.length() == 0 ? "" : ",").append(tp.partition());
        return s.length() == 0 ? "-" : s.toString();
    }

    static void consume(String bootstrap, String topic, String group, String outDir, long deadline, Set<Long> unread,
                        Set<Long> read, AtomicBoolean producerDone, AtomicLong consumed, AtomicLong commitErrors,
                        AtomicLong pollErrors, AtomicLong assignments) throws IOException {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "eddy-replicated-consumer");
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
        p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
        p.put(ConsumerConfig.CHECK_CRCS_CONFIG, "true");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        try (BufferedWriter out = new BufferedWriter(new FileWriter(Paths.get(outDir, "consumed.txt").toFile()));
             KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            c.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                void event(String kind, Collection<TopicPartition> tps) {
                    try {
                        out.write(kind + " " + System.nanoTime() + " " + partitionList(tps) + "\n");
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                }

                public void onPartitionsAssigned(Collection<TopicPartition> tps) {
                    event("a", tps);
                    if (!tps.isEmpty() && assignments.getAndIncrement() == 0) {
                        System.out.println("assigned " + System.nanoTime());
                        System.out.flush();
                    }
                }

                public void onPartitionsRevoked(Collection<TopicPartition> tps) {
                    event("r", tps);
                }

                public void onPartitionsLost(Collection<TopicPartition> tps) {
                    event("l", tps);
                }
            });
            while (System.nanoTime() < deadline) {
                if (producerDone.get() && unread.isEmpty()) break;
                ConsumerRecords<byte[], byte[]> records;
                try {
                    records = c.poll(Duration.ofMillis(200));
                } catch (RuntimeException e) {
                    pollErrors.incrementAndGet();
                    out.write("e " + System.nanoTime() + " poll " + e.getClass().getSimpleName() + " "
                              + oneLine(e.getMessage()) + "\n");
                    continue;
                }
                if (records.isEmpty()) continue;
                Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    out.write("m " + r.partition() + " " + r.offset() + " "
                              + new String(r.value(), StandardCharsets.US_ASCII) + " " + System.nanoTime() + "\n");
                    consumed.incrementAndGet();
                    long k = key(r.partition(), r.offset());
                    read.add(k);
                    unread.remove(k);
                    next.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                try {
                    c.commitSync(next, Duration.ofSeconds(10));
                    StringBuilder s = new StringBuilder();
                    for (Map.Entry<TopicPartition, OffsetAndMetadata> e : next.entrySet())
                        s.append(s.length() == 0 ? "" : ",").append(e.getKey().partition()).append(":")
                         .append(e.getValue().offset());
                    out.write("c " + System.nanoTime() + " " + s + "\n");
                } catch (RuntimeException e) {
                    commitErrors.incrementAndGet();
                    out.write("e " + System.nanoTime() + " commit " + e.getClass().getSimpleName() + " "
                              + oneLine(e.getMessage()) + "\n");
                }
            }
            c.close(CloseOptions.timeout(Duration.ofSeconds(5)));
        }
    }

    // ------------------------------------------------------------------ latency

    static int latency(String bootstrap, String topic, int rate, int seconds, int size) throws Exception {
        int total = rate * seconds;
        long[] latencies = new long[total];
        long[] ackTimes = new long[total];
        int[] n = {0};
        long[] errors = {0};
        byte[] payload = new byte[size];
        Arrays.fill(payload, (byte) 'x');
        try (KafkaProducer<byte[], byte[]> producer = producer(bootstrap, "0")) {
            producer.partitionsFor(topic);
            long start = System.nanoTime(), interval = 1_000_000_000L / rate;
            System.out.println("started " + start);
            System.out.flush();
            for (int i = 0; i < total; i++) {
                sleepUntil(start + i * interval);
                final long sendNs = System.nanoTime();
                producer.send(new ProducerRecord<>(topic, 0, null, payload), (md, e) -> {
                    long now = System.nanoTime();
                    synchronized (latencies) {
                        if (e != null) {
                            if (errors[0]++ < 5) System.err.println("delivery failed: " + e);
                            return;
                        }
                        latencies[n[0]] = now - sendNs;
                        ackTimes[n[0]++] = now;
                    }
                });
            }
            producer.flush();
        }
        int count = n[0];
        long[] sorted = Arrays.copyOf(latencies, count);
        Arrays.sort(sorted);
        long[] acks = Arrays.copyOf(ackTimes, count);
        Arrays.sort(acks);
        long gap = 0, gapStart = 0, gapEnd = 0;
        for (int i = 1; i < count; i++) {
            if (acks[i] - acks[i - 1] > gap) {
                gap = acks[i] - acks[i - 1];
                gapStart = acks[i - 1];
                gapEnd = acks[i];
            }
        }
        System.out.printf("latency msgs=%d p50_us=%d p99_us=%d p999_us=%d max_us=%d errors=%d gap_us=%d gap_start_ns=%d"
                          + " gap_end_ns=%d%n", count, rank(sorted, 0.50) / 1000, rank(sorted, 0.99) / 1000,
                          rank(sorted, 0.999) / 1000, count > 0 ? sorted[count - 1] / 1000 : 0, errors[0], gap / 1000,
                          gapStart, gapEnd);
        return count == total && errors[0] == 0 ? 0 : 1;
    }

    /** Nearest-rank percentile, as bench_clock.h's bench_rank. */
    static long rank(long[] sorted, double p) {
        int n = sorted.length;
        if (n == 0) return -1000;
        long r = (long) (p * n + 0.999999);
        r = Math.max(1, Math.min(n, r));
        return sorted[(int) r - 1];
    }
}
