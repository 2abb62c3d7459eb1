// Reads a topic of a Kafka cluster from the beginning of every partition to
// its end offsets with Kafka's own Java consumer (kafka-clients, on
// kafka_fixture.classpath()) and reports what it found. Run by the
// integration tests (kafka_fixture.numbered_check / dump_records):
//
//   NumberedCheck numbers BOOTSTRAP TOPIC COUNT PARTITIONS [--dump FILE]
//       the values are the numbers of rdkafka_idempotence.c ("%09d", number
//       i written to partition i % PARTITIONS). Per partition: records,
//       duplicates (a number seen before), out-of-order records (a number
//       not greater than the one before it), gaps (numbers of this partition
//       skipped between two records), misplaced records (in the wrong
//       partition), unparsable values. Overall: distinct numbers, missing
//       numbers (with the first few). --dump writes "partition offset number"
//       lines in offset order for further analysis.
//   NumberedCheck records BOOTSTRAP FILE TOPIC:PARTITIONS...
//       every record of the topics as one JSON line: topic, partition,
//       offset, timestamp, timestamp type, key, value and headers (hex), in
//       offset order per partition.
//   NumberedCheck producers BOOTSTRAP TOPIC PARTITIONS [--until-gone]
//       the idempotent producers the partition leaders remember
//       (Admin.describeProducers): id, epoch, last sequence, last timestamp.
//       --until-gone asks again every 200 ms until no partition remembers
//       any (the central cluster has expired them) or the timeout passes.
//
// The last line of stdout is one JSON object with the results; exit code 0
// when everything is as expected (numbers: every number exactly once, in
// order, in its partition), 1 when not, 2 on a usage or consumer error.
// Waits at most EDDY_CHECK_TIMEOUT_MS (default 60000) for the end offsets.
// EDDY_CHECK_ISOLATION=read_committed reads as a read_committed consumer
// (to the last stable offset, aborted transactions left out).

import java.io.BufferedWriter;
import java.io.FileWriter;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.DescribeProducersResult.PartitionProducerState;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class NumberedCheck {
    interface Sink {
        void accept(ConsumerRecord<byte[], byte[]> r) throws IOException;
    }

    static final class PartitionResult {
        long records, duplicates, outOfOrder, gaps, misplaced, unparsable;
        long first = -1, last = -1, startOffset = -1, endOffset = -1;
        long previous = -1;
        final List<String> examples = new ArrayList<>();

        void example(String what) {
            if (examples.size() < 10) examples.add(what);
        }
    }

    public static void main(String[] args) throws Exception {
        try {
            System.exit(run(args));
        } catch (IllegalArgumentException e) {
            System.err.println("NumberedCheck: " + e.getMessage());
            System.exit(2);
        }
    }

    static int run(String[] args) throws Exception {
        if (args.length >= 5 && args[0].equals("numbers")) {
            String dump = null;
            if (args.length == 7 && args[5].equals("--dump")) dump = args[6];
            else if (args.length != 5) throw new IllegalArgumentException("usage: numbers BOOTSTRAP TOPIC COUNT PARTITIONS [--dump FILE]");
            return numbers(args[1], args[2], Long.parseLong(args[3]), Integer.parseInt(args[4]), dump);
        }
        if (args.length >= 4 && args[0].equals("records")) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 3; i < args.length; i++) {
                int colon = args[i].lastIndexOf(':');
                if (colon <= 0) throw new IllegalArgumentException("records: TOPIC:PARTITIONS expected, got " + args[i]);
                int n = Integer.parseInt(args[i].substring(colon + 1));
                for (int p = 0; p < n; p++) tps.add(new TopicPartition(args[i].substring(0, colon), p));
            }
            return records(args[1], tps, args[2]);
        }
        if ((args.length == 4 || args.length == 5) && args[0].equals("producers")) {
            boolean untilGone = args.length == 5 && args[4].equals("--until-gone");
            if (args.length == 5 && !untilGone) throw new IllegalArgumentException("producers: unknown option " + args[4]);
            return producers(args[1], args[2], Integer.parseInt(args[3]), untilGone);
        }
        throw new IllegalArgumentException("usage: NumberedCheck numbers BOOTSTRAP TOPIC COUNT PARTITIONS [--dump FILE]"
                + " | records BOOTSTRAP FILE TOPIC:PARTITIONS... | producers BOOTSTRAP TOPIC PARTITIONS [--until-gone]");
    }

    static KafkaConsumer<byte[], byte[]> consumer(String bootstrap) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "eddy-numbered-check");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG,
              System.getenv().getOrDefault("EDDY_CHECK_ISOLATION", "read_uncommitted"));
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "10000");
        p.put(ConsumerConfig.CHECK_CRCS_CONFIG, "true");
        return new KafkaConsumer<>(p);
    }

    static long timeoutMs() {
        return Long.parseLong(System.getenv().getOrDefault("EDDY_CHECK_TIMEOUT_MS", "60000"));
    }

    static List<TopicPartition> partitionsOf(String topic, int partitions) {
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < partitions; i++) tps.add(new TopicPartition(topic, i));
        return tps;
    }

    /** Reads every partition from its beginning to its end offset (as of
     * the start), handing each record to sink in offset order per
     * partition. Returns the [start, end) offsets per partition. */
    static Map<TopicPartition, long[]> readAll(String bootstrap, List<TopicPartition> tps, Sink sink) throws IOException {
        long timeoutMs = timeoutMs();
        long deadline = System.currentTimeMillis() + timeoutMs;
        Map<TopicPartition, long[]> bounds = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> c = consumer(bootstrap)) {
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> begin = c.beginningOffsets(tps, Duration.ofMillis(timeoutMs));
            Map<TopicPartition, Long> end = c.endOffsets(tps, Duration.ofMillis(timeoutMs));
            for (TopicPartition tp : tps) bounds.put(tp, new long[] {begin.get(tp), end.get(tp)});
            List<TopicPartition> open = new ArrayList<>();
            for (TopicPartition tp : tps) {
                if (end.get(tp) > begin.get(tp)) open.add(tp); else c.pause(List.of(tp));
            }
            while (!open.isEmpty()) {
                if (System.currentTimeMillis() > deadline) {
                    StringBuilder where = new StringBuilder();
                    for (TopicPartition tp : open) {
                        where.append(" ").append(tp).append(" at ").append(c.position(tp)).append(" of ").append(end.get(tp));
                    }
                    throw new IllegalStateException("end offsets not reached within " + timeoutMs + " ms:" + where);
                }
                ConsumerRecords<byte[], byte[]> polled = c.poll(Duration.ofMillis(500));
                for (TopicPartition tp : polled.partitions()) {
                    long stop = end.get(tp);
                    for (ConsumerRecord<byte[], byte[]> r : polled.records(tp)) {
                        if (r.offset() < stop) sink.accept(r);
                    }
                }
                for (int i = open.size() - 1; i >= 0; i--) {
                    TopicPartition tp = open.get(i);
                    if (c.position(tp) >= end.get(tp)) {
                        c.pause(List.of(tp));
                        open.remove(i);
                    }
                }
            }
        }
        return bounds;
    }

    static int numbers(String bootstrap, String topic, long count, int partitions, String dumpPath) throws Exception {
        if (count < 0 || count > Integer.MAX_VALUE || partitions <= 0) throw new IllegalArgumentException("bad COUNT or PARTITIONS");
        BitSet seen = new BitSet((int) count);
        PartitionResult[] results = new PartitionResult[partitions];
        for (int i = 0; i < partitions; i++) results[i] = new PartitionResult();
        long[] outOfRange = {0};
        BufferedWriter dump = dumpPath == null ? null : new BufferedWriter(new FileWriter(dumpPath));
        Map<TopicPartition, long[]> bounds;
        try {
            bounds = readAll(bootstrap, partitionsOf(topic, partitions), r -> {
                PartitionResult pr = results[r.partition()];
                pr.records++;
                long n;
                try {
                    n = Long.parseLong(new String(r.value(), java.nio.charset.StandardCharsets.US_ASCII));
                } catch (RuntimeException e) {
                    pr.unparsable++;
                    pr.example("offset " + r.offset() + ": unparsable value");
                    if (dump != null) dump.write(r.partition() + " " + r.offset() + " -1\n");
                    return;
                }
                if (dump != null) dump.write(r.partition() + " " + r.offset() + " " + n + "\n");
                if (n < 0 || n >= count) {
                    outOfRange[0]++;
                    pr.example("offset " + r.offset() + ": number " + n + " out of range");
                    return;
                }
                if (seen.get((int) n)) {
                    pr.duplicates++;
                    pr.example("offset " + r.offset() + ": " + n + " again");
                }
                seen.set((int) n);
                if (n % partitions != r.partition()) {
                    pr.misplaced++;
                    pr.example("offset " + r.offset() + ": " + n + " in partition " + r.partition());
                }
                if (pr.previous >= 0 && n <= pr.previous) {
                    pr.outOfOrder++;
                    pr.example("offset " + r.offset() + ": " + n + " after " + pr.previous);
                } else if (n % partitions == r.partition()) {
                    long expected = pr.previous < 0 ? r.partition() : pr.previous + partitions;
                    if (n > expected) {
                        pr.gaps++;
                        pr.example("offset " + r.offset() + ": " + n + " after " + pr.previous + " (gap)");
                    }
                }
                if (pr.first < 0) pr.first = n;
                pr.last = n;
                pr.previous = n;
            });
        } catch (RuntimeException e) {
            System.out.println("{\"error\": " + quote(e.toString()) + "}");
            return 2;
        } finally {
            if (dump != null) dump.close();
        }
        long distinct = seen.cardinality();
        List<Long> missing = new ArrayList<>();
        for (int i = seen.nextClearBit(0); i < count && missing.size() < 20; i = seen.nextClearBit(i + 1)) missing.add((long) i);
        boolean ok = distinct == count && outOfRange[0] == 0;
        long total = 0;
        StringBuilder json = new StringBuilder("{\"topic\": ").append(quote(topic)).append(", \"count\": ").append(count)
                .append(", \"distinct\": ").append(distinct).append(", \"missing\": ").append(count - distinct)
                .append(", \"missing_examples\": ").append(missing).append(", \"out_of_range\": ").append(outOfRange[0])
                .append(", \"partitions\": [");
        for (int i = 0; i < partitions; i++) {
            PartitionResult pr = results[i];
            total += pr.records;
            ok &= pr.duplicates == 0 && pr.outOfOrder == 0 && pr.gaps == 0 && pr.misplaced == 0 && pr.unparsable == 0;
            long[] b = bounds.get(new TopicPartition(topic, i));
            System.out.printf("partition %d: offsets %d..%d, %d records (numbers %d..%d): %d duplicates, %d out of order, "
                    + "%d gaps, %d misplaced, %d unparsable%s%n", i, b[0], b[1], pr.records, pr.first, pr.last, pr.duplicates,
                    pr.outOfOrder, pr.gaps, pr.misplaced, pr.unparsable, pr.examples.isEmpty() ? "" : "; e.g. " + pr.examples);
            json.append(i == 0 ? "" : ", ").append("{\"partition\": ").append(i).append(", \"start_offset\": ").append(b[0])
                    .append(", \"end_offset\": ").append(b[1]).append(", \"records\": ").append(pr.records)
                    .append(", \"duplicates\": ").append(pr.duplicates).append(", \"out_of_order\": ").append(pr.outOfOrder)
                    .append(", \"gaps\": ").append(pr.gaps).append(", \"misplaced\": ").append(pr.misplaced)
                    .append(", \"unparsable\": ").append(pr.unparsable).append(", \"examples\": [");
            for (int j = 0; j < pr.examples.size(); j++) json.append(j == 0 ? "" : ", ").append(quote(pr.examples.get(j)));
            json.append("]}");
        }
        ok &= total == count;
        json.append("], \"records\": ").append(total).append(", \"ok\": ").append(ok).append("}");
        System.out.printf("%s: %d records, %d distinct of %d numbers, %d missing%s%n", topic, total, distinct, count,
                count - distinct, missing.isEmpty() ? "" : " e.g. " + missing);
        System.out.println(json);
        return ok ? 0 : 1;
    }

    static int records(String bootstrap, List<TopicPartition> tps, String path) throws Exception {
        long[] n = {0};
        try (BufferedWriter out = new BufferedWriter(new FileWriter(path))) {
            readAll(bootstrap, tps, r -> {
                StringBuilder line = new StringBuilder("{\"topic\": ").append(quote(r.topic())).append(", \"partition\": ")
                        .append(r.partition()).append(", \"offset\": ")
                        .append(r.offset()).append(", \"timestamp\": ").append(r.timestamp()).append(", \"timestamp_type\": ")
                        .append(quote(r.timestampType().name)).append(", \"key\": ").append(hex(r.key()))
                        .append(", \"value\": ").append(hex(r.value())).append(", \"headers\": [");
                boolean first = true;
                for (Header h : r.headers()) {
                    line.append(first ? "" : ", ").append("[").append(quote(h.key())).append(", ").append(hex(h.value())).append("]");
                    first = false;
                }
                out.write(line.append("]}\n").toString());
                n[0]++;
            });
        } catch (RuntimeException e) {
            System.out.println("{\"error\": " + quote(e.toString()) + "}");
            return 2;
        }
        System.out.println("{\"records\": " + n[0] + ", \"ok\": true}");
        return 0;
    }

    static int producers(String bootstrap, String topic, int partitions, boolean untilGone) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(AdminClientConfig.CLIENT_ID_CONFIG, "eddy-producers-check");
        long timeoutMs = timeoutMs();
        long deadline = System.currentTimeMillis() + timeoutMs;
        try (Admin admin = Admin.create(p)) {
            while (true) {
                Map<TopicPartition, PartitionProducerState> states;
                try {
                    states = admin.describeProducers(partitionsOf(topic, partitions)).all()
                            .get(Math.max(1, deadline - System.currentTimeMillis()), java.util.concurrent.TimeUnit.MILLISECONDS);
                } catch (Exception e) {
                    System.out.println("{\"error\": " + quote("describeProducers: " + e) + "}");
                    return 2;
                }
                StringBuilder json = new StringBuilder("{\"partitions\": {");
                int remembered = 0;
                for (int i = 0; i < partitions; i++) {
                    PartitionProducerState st = states.get(new TopicPartition(topic, i));
                    json.append(i == 0 ? "" : ", ").append("\"").append(i).append("\": [");
                    boolean first = true;
                    for (ProducerState ps : st.activeProducers()) {
                        json.append(first ? "" : ", ").append("{\"producer_id\": ").append(ps.producerId())
                                .append(", \"epoch\": ").append(ps.producerEpoch()).append(", \"last_sequence\": ")
                                .append(ps.lastSequence()).append(", \"last_timestamp\": ").append(ps.lastTimestamp()).append("}");
                        first = false;
                        remembered++;
                    }
                    json.append("]");
                }
                json.append("}, \"remembered\": ").append(remembered).append("}");
                if (!untilGone || remembered == 0) {
                    System.out.println(json);
                    return 0;
                }
                if (System.currentTimeMillis() > deadline) {
                    System.out.println(json);
                    System.out.println("{\"error\": " + quote("producers still remembered after " + timeoutMs + " ms: " + json) + "}");
                    return 2;
                }
                Thread.sleep(200);
            }
        }
    }

    static String hex(byte[] b) {
        if (b == null) return "null";
        StringBuilder s = new StringBuilder("\"");
        for (byte x : b) s.append(String.format("%02x", x & 0xff));
        return s.append("\"").toString();
    }

    static String quote(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') out.append('\\').append(ch);
            else if (ch < 0x20) out.append(String.format("\\u%04x", (int) ch));
            else out.append(ch);
        }
        return out.append("\"").toString();
    }
}
