import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.Future;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Utils;

/**
 * The Java producer (acks=all, enable.idempotence=true) with every
 * compression type, read back by an assigned (group-less) consumer: keys,
 * values, headers and timestamps intact, offsets as acknowledged, keyed
 * records in the default partitioner's partition. Then the consumer's
 * offset API: beginningOffsets/endOffsets, seek, seekToBeginning/End,
 * offsetsForTimes (one record per batch, and inside one uncompressed / lz4
 * batch), partitionsFor; fetch sizes smaller than a batch; a topic's
 * max.message.bytes refusing a larger record.
 *
 * Usage: ProducerChecks BOOTSTRAP. Topics: codec-{none,gzip,snappy,lz4,zstd}
 * (2 partitions), producer-bulk (3), consumer-times, batch-times-{none,lz4},
 * producer-max-bytes (1).
 */
public class ProducerChecks {
    static final String[] CODECS = {"none", "gzip", "snappy", "lz4", "zstd"};
    static final int PER_CODEC = 300;
    static final int BULK = 20000;
    static final int TIMES = 100;

    static String bootstrap;
    static Checks checks = new Checks("");

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        checks.section("create topics", () -> {
            try (Admin admin = Admin.create(Checks.props(bootstrap))) {
                List<NewTopic> topics = new ArrayList<>();
                for (String c : CODECS) topics.add(new NewTopic("codec-" + c, 2, (short) 1));
                topics.add(new NewTopic("producer-bulk", 3, (short) 1));
                topics.add(new NewTopic("consumer-times", 1, (short) 1));
                topics.add(new NewTopic("batch-times-none", 1, (short) 1));
                topics.add(new NewTopic("batch-times-lz4", 1, (short) 1));
                topics.add(new NewTopic("producer-max-bytes", 1, (short) 1).configs(Map.of("max.message.bytes", "10000")));
                checks.noException("admin creates the producer topics", () -> admin.createTopics(topics).all().get());
            }
        });
        for (String codec : CODECS) checks.section("codec " + codec, () -> codec(codec));
        checks.section("bulk", ProducerChecks::bulk);
        checks.section("consumer offsets", ProducerChecks::consumerOffsets);
        for (String codec : List.of("none", "lz4")) checks.section("offsetsForTimes in one " + codec + " batch", () -> timesInBatch(codec));
        checks.section("small fetch sizes", ProducerChecks::smallFetches);
        checks.section("max.message.bytes", ProducerChecks::tooLarge);
        System.exit(checks.finish());
    }

    static KafkaProducer<byte[], byte[]> producer(String... extra) {
        List<String> kv = new ArrayList<>(List.of(
            "acks", "all", "enable.idempotence", "true", "linger.ms", "10",
            "max.in.flight.requests.per.connection", "5", "delivery.timeout.ms", "30000",
            "request.timeout.ms", "10000",
            "key.serializer", ByteArraySerializer.class.getName(),
            "value.serializer", ByteArraySerializer.class.getName()));
        kv.addAll(List.of(extra));
        return new KafkaProducer<>(Checks.props(bootstrap, kv.toArray(new String[0])));
    }

    static KafkaConsumer<byte[], byte[]> consumer(String... extra) {
        List<String> kv = new ArrayList<>(List.of(
            "key.deserializer", ByteArrayDeserializer.class.getName(),
            "value.deserializer", ByteArrayDeserializer.class.getName(),
            "auto.offset.reset", "earliest", "request.timeout.ms", "10000",
            "default.api.timeout.ms", "20000"));
        kv.addAll(List.of(extra));
        return new KafkaConsumer<>(Checks.props(bootstrap, kv.toArray(new String[0])));
    }

    static byte[] bytes(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    static String str(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    /** Reads partitions from their beginning until count records arrived or
     * the deadline passed. */
    static List<ConsumerRecord<byte[], byte[]>> readAll(KafkaConsumer<byte[], byte[]> c, List<TopicPartition> tps,
                                                        int count) {
        c.assign(tps);
        c.seekToBeginning(tps);
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (out.size() < count && System.nanoTime() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) out.add(r);
        }
        return out;
    }

    // One sent record and what it should read back as.
    record Sent(String key, String value, long timestamp, List<Header> headers, Future<RecordMetadata> ack) {}

    static String headersText(Iterable<Header> hs) {
        StringBuilder sb = new StringBuilder("[");
        for (Header h : hs) {
            sb.append(h.key()).append('=').append(h.value() == null ? "null" : Arrays.toString(h.value())).append(' ');
        }
        return sb.append(']').toString();
    }

    static void codec(String codec) throws Exception {
        String topic = "codec-" + codec;
        String n = codec + " ";
        long base = System.currentTimeMillis() - 600_000;  // ten minutes ago, whole seconds apart
        List<Sent> sent = new ArrayList<>();
        String filler = "sensor-reading-0123456789-".repeat(8);
        try (KafkaProducer<byte[], byte[]> p = producer("compression.type", codec, "batch.size", "16384")) {
            for (int i = 0; i < PER_CODEC; i++) {
                String key = i % 10 == 0 ? null : "key-" + (i % 37);
                String value;
                if (i == 7) value = "";
                else if (i == 13) value = null;  // a tombstone
                else value = codec + "-value-" + i + "-" + filler.substring(0, i % filler.length());
                List<Header> headers = new ArrayList<>();
                headers.add(new RecordHeader("seq", ByteBuffer.allocate(4).putInt(i).array()));
                headers.add(new RecordHeader("codec", bytes(codec)));
                if (i % 3 == 0) headers.add(new RecordHeader("empty", new byte[0]));
                if (i % 5 == 0) headers.add(new RecordHeader("null-valued", (byte[]) null));
                if (i % 4 == 0) headers.add(new RecordHeader("seq", bytes("repeated key " + i)));
                long ts = base + i * 1000L;
                // Keyless records go to partition i % 2 explicitly; keyed ones to the partitioner's choice.
                Integer partition = key == null ? Integer.valueOf(i % 2) : null;
                ProducerRecord<byte[], byte[]> rec =
                    new ProducerRecord<>(topic, partition, ts, bytes(key), bytes(value), headers);
                sent.add(new Sent(key, value, ts, headers, p.send(rec)));
            }
            p.flush();
        }
        List<RecordMetadata> acks = new ArrayList<>();
        String ackError = null;
        for (Sent s : sent) {
            try {
                acks.add(s.ack().get());
            } catch (Exception e) {
                if (ackError == null) ackError = Checks.describe(e);
                acks.add(null);
            }
        }
        if (!checks.check(n + "every send acknowledged (acks=all, idempotent)", ackError == null, ackError)) return;

        Map<Integer, List<Long>> offsets = new TreeMap<>();
        int misplaced = 0;
        String misplacedDetail = "";
        for (int i = 0; i < sent.size(); i++) {
            RecordMetadata m = acks.get(i);
            offsets.computeIfAbsent(m.partition(), k -> new ArrayList<>()).add(m.offset());
            String key = sent.get(i).key();
            if (key != null) {
                int want = Utils.toPositive(Utils.murmur2(bytes(key))) % 2;
                if (m.partition() != want && misplaced++ == 0) {
                    misplacedDetail = "key " + key + " in partition " + m.partition() + ", murmur2 says " + want;
                }
            }
        }
        checks.check(n + "keyed records in the murmur2 partition", misplaced == 0, misplaced + " misplaced, " + misplacedDetail);
        boolean contiguous = true;
        for (List<Long> os : offsets.values()) {
            for (int j = 0; j < os.size(); j++) contiguous &= os.get(j) == j;
        }
        checks.check(n + "acknowledged offsets are 0,1,2... in each partition in send order", contiguous, offsets.toString().substring(0, Math.min(300, offsets.toString().length())));

        List<TopicPartition> tps = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
        List<ConsumerRecord<byte[], byte[]>> got;
        try (KafkaConsumer<byte[], byte[]> c = consumer()) {
            got = readAll(c, tps, PER_CODEC);
        }
        checks.equal(n + "records read back", got.size(), PER_CODEC);
        Map<String, ConsumerRecord<byte[], byte[]>> byPos = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : got) byPos.put(r.partition() + "@" + r.offset(), r);
        int badKey = 0, badValue = 0, badHeaders = 0, badTs = 0, missing = 0;
        String firstBad = "";
        for (int i = 0; i < sent.size(); i++) {
            Sent s = sent.get(i);
            RecordMetadata m = acks.get(i);
            ConsumerRecord<byte[], byte[]> r = byPos.get(m.partition() + "@" + m.offset());
            if (r == null) {
                missing++;
                continue;
            }
            if (!Objects.equals(str(r.key()), s.key())) {
                if (badKey++ == 0) firstBad += " key #" + i + " " + str(r.key()) + " != " + s.key();
            }
            if (!Objects.equals(str(r.value()), s.value())) {
                if (badValue++ == 0) firstBad += " value #" + i + " " + str(r.value()) + " != " + s.value();
            }
            if (!headersText(r.headers()).equals(headersText(s.headers()))) {
                if (badHeaders++ == 0) firstBad += " headers #" + i + " " + headersText(r.headers()) + " != " + headersText(s.headers());
            }
            if (r.timestamp() != s.timestamp() || r.timestampType() != TimestampType.CREATE_TIME) {
                if (badTs++ == 0) firstBad += " timestamp #" + i + " " + r.timestamp() + " " + r.timestampType() + " != " + s.timestamp();
            }
        }
        checks.equal(n + "every acknowledged record found at its offset", missing, 0);
        checks.check(n + "keys intact (null keys stay null)", badKey == 0, badKey + " bad" + firstBad);
        checks.check(n + "values intact (empty and null values kept)", badValue == 0, badValue + " bad" + firstBad);
        checks.check(n + "headers intact (order, repeated keys, empty and null values)", badHeaders == 0, badHeaders + " bad" + firstBad);
        checks.check(n + "timestamps intact (CreateTime)", badTs == 0, badTs + " bad" + firstBad);
        if (acks.get(1) != null) {
            checks.equal(n + "RecordMetadata timestamp is the record's CreateTime", acks.get(1).timestamp(), sent.get(1).timestamp());
        }
    }

    /** Many records through five in-flight requests per connection. */
    static void bulk() throws Exception {
        String topic = "producer-bulk";
        List<Future<RecordMetadata>> fs = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> p = producer("compression.type", "lz4", "linger.ms", "5", "batch.size", "8192")) {
            for (int i = 0; i < BULK; i++) {
                fs.add(p.send(new ProducerRecord<>(topic, i % 3, null, bytes(String.format("%09d", i)))));
            }
            p.flush();
        }
        String err = null;
        long[] next = new long[3];
        boolean inOrder = true;
        for (int i = 0; i < BULK; i++) {
            try {
                RecordMetadata m = fs.get(i).get();
                inOrder &= m.offset() == next[m.partition()]++;
            } catch (Exception e) {
                if (err == null) err = Checks.describe(e);
            }
        }
        checks.check("bulk " + BULK + " idempotent sends acknowledged", err == null, err);
        checks.check("bulk acknowledged offsets follow send order in each partition", inOrder);
        List<TopicPartition> tps = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1),
                                           new TopicPartition(topic, 2));
        try (KafkaConsumer<byte[], byte[]> c = consumer("max.poll.records", "5000")) {
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            long total = end.values().stream().mapToLong(Long::longValue).sum();
            checks.equal("bulk endOffsets add up to the records sent (no duplicates)", total, (long) BULK);
            List<ConsumerRecord<byte[], byte[]>> got = readAll(c, tps, BULK);
            Set<Integer> seen = new HashSet<>();
            int disorder = 0;
            int[] last = {-1, -1, -1};
            for (ConsumerRecord<byte[], byte[]> r : got) {
                int v = Integer.parseInt(str(r.value()));
                seen.add(v);
                if (v <= last[r.partition()] || v % 3 != r.partition()) disorder++;
                last[r.partition()] = v;
            }
            checks.equal("bulk every number read back once", seen.size() == BULK && got.size() == BULK,
                         true);
            checks.equal("bulk numbers in send order within each partition", disorder, 0);
        }
    }

    static void consumerOffsets() throws Exception {
        String topic = "consumer-times";
        TopicPartition tp = new TopicPartition(topic, 0);
        long base = (System.currentTimeMillis() / 1000) * 1000 - 300_000;
        try (KafkaProducer<byte[], byte[]> p = producer("linger.ms", "0")) {
            for (int i = 0; i < TIMES; i++) {
                // One batch each: offsetsForTimes has to look inside the log, not only at batch starts.
                p.send(new ProducerRecord<>(topic, 0, base + i * 1000L, null, bytes("t" + i))).get();
            }
        }
        try (KafkaConsumer<byte[], byte[]> c = consumer()) {
            List<PartitionInfo> parts = c.partitionsFor(topic);
            checks.equal("partitionsFor lists the partition", parts.size(), 1);
            if (!parts.isEmpty()) {
                checks.check("partitionsFor names a leader", parts.get(0).leader() != null && parts.get(0).leader().id() >= 0,
                             parts.get(0));
            }
            checks.equal("beginningOffsets", c.beginningOffsets(List.of(tp)).get(tp), 0L);
            checks.equal("endOffsets", c.endOffsets(List.of(tp)).get(tp), (long) TIMES);

            c.assign(List.of(tp));
            c.seek(tp, 42);
            checks.equal("position after seek", c.position(tp), 42L);
            ConsumerRecord<byte[], byte[]> first = null;
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (first == null && System.nanoTime() < deadline) {
                var rs = c.poll(Duration.ofMillis(200));
                if (!rs.isEmpty()) first = rs.iterator().next();
            }
            checks.check("poll after seek(42) starts at offset 42", first != null && first.offset() == 42
                         && "t42".equals(str(first.value())), first);

            c.seekToEnd(List.of(tp));
            checks.equal("position after seekToEnd", c.position(tp), (long) TIMES);
            c.seekToBeginning(List.of(tp));
            checks.equal("position after seekToBeginning", c.position(tp), 0L);

            Map<TopicPartition, OffsetAndTimestamp> t;
            t = c.offsetsForTimes(Map.of(tp, base + 10_500));
            checks.check("offsetsForTimes between two records: the later one", t.get(tp) != null
                         && t.get(tp).offset() == 11 && t.get(tp).timestamp() == base + 11_000, t);
            t = c.offsetsForTimes(Map.of(tp, base + 25_000));
            checks.check("offsetsForTimes at a record's own timestamp: that record", t.get(tp) != null
                         && t.get(tp).offset() == 25 && t.get(tp).timestamp() == base + 25_000, t);
            t = c.offsetsForTimes(Map.of(tp, base - 100_000));
            checks.check("offsetsForTimes before the first record: offset 0", t.get(tp) != null
                         && t.get(tp).offset() == 0 && t.get(tp).timestamp() == base, t);
            t = c.offsetsForTimes(Map.of(tp, base + TIMES * 1000L + 1));
            checks.check("offsetsForTimes after the last record: null", t.containsKey(tp) && t.get(tp) == null, t);

            // seek to what offsetsForTimes found, then read that record
            t = c.offsetsForTimes(Map.of(tp, base + 77_000));
            if (t.get(tp) != null) {
                c.seek(tp, t.get(tp).offset());
                first = null;
                deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (first == null && System.nanoTime() < deadline) {
                    var rs = c.poll(Duration.ofMillis(200));
                    if (!rs.isEmpty()) first = rs.iterator().next();
                }
                checks.check("seek to offsetsForTimes result reads the record with that timestamp",
                             first != null && first.timestamp() == base + 77_000 && "t77".equals(str(first.value())), first);
            } else {
                checks.fail("seek to offsetsForTimes result reads the record with that timestamp", "offsetsForTimes gave null");
            }
        }
    }

    /** Records that share one batch: offsetsForTimes has to find the record inside it (Kafka
     * decompresses a compressed batch to do so). */
    static void timesInBatch(String codec) throws Exception {
        String topic = "batch-times-" + codec;
        TopicPartition tp = new TopicPartition(topic, 0);
        long base = (System.currentTimeMillis() / 1000) * 1000 - 200_000;
        List<Future<RecordMetadata>> fs = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> p = producer("compression.type", codec, "linger.ms", "60000", "delivery.timeout.ms", "120000",
                                                         "batch.size", "1000000")) {
            for (int i = 0; i < 50; i++) {
                fs.add(p.send(new ProducerRecord<>(topic, 0, base + i * 1000L, null, bytes("b" + i))));
            }
            p.flush();  // one batch: linger.ms is far away, batch.size is not reached
        }
        for (Future<RecordMetadata> f : fs) f.get();
        String n = codec + " batch ";
        try (KafkaConsumer<byte[], byte[]> c = consumer()) {
            Map<TopicPartition, OffsetAndTimestamp> t = c.offsetsForTimes(Map.of(tp, base + 20_500));
            checks.check(n + "offsetsForTimes between two records: the later one (offset 21)", t.get(tp) != null
                         && t.get(tp).offset() == 21 && t.get(tp).timestamp() == base + 21_000, t);
            t = c.offsetsForTimes(Map.of(tp, base + 33_000));
            checks.check(n + "offsetsForTimes at a record's own timestamp (offset 33)", t.get(tp) != null
                         && t.get(tp).offset() == 33 && t.get(tp).timestamp() == base + 33_000, t);
            t = c.offsetsForTimes(Map.of(tp, base - 1));
            checks.check(n + "offsetsForTimes before the batch: offset 0", t.get(tp) != null
                         && t.get(tp).offset() == 0 && t.get(tp).timestamp() == base, t);
        }
    }

    /** fetch.max.bytes and max.partition.fetch.bytes below one batch's size: Kafka still returns the
     * first whole batch of a partition, so the consumer makes progress (KIP-74). */
    static void smallFetches() throws Exception {
        String topic = "codec-gzip";
        List<TopicPartition> tps = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
        try (KafkaConsumer<byte[], byte[]> c = consumer("fetch.max.bytes", "1024", "max.partition.fetch.bytes", "512")) {
            List<ConsumerRecord<byte[], byte[]>> got = readAll(c, tps, PER_CODEC);
            checks.equal("fetch.max.bytes=1024, max.partition.fetch.bytes=512: every record of the gzip topic read",
                         got.size(), PER_CODEC);
        }
        try (KafkaConsumer<byte[], byte[]> c = consumer("max.poll.records", "7")) {
            c.assign(tps);
            c.seekToBeginning(tps);
            int max = 0, total = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (total < PER_CODEC && System.nanoTime() < deadline) {
                int n = c.poll(Duration.ofMillis(200)).count();
                max = Math.max(max, n);
                total += n;
            }
            checks.check("max.poll.records=7: every record, at most 7 per poll", total == PER_CODEC && max <= 7,
                         total + " records, largest poll " + max);
        }
    }

    /** The topic's max.message.bytes (10000) refuses a larger batch: RecordTooLargeException. */
    static void tooLarge() throws Exception {
        String topic = "producer-max-bytes";
        try (KafkaProducer<byte[], byte[]> p = producer("linger.ms", "0")) {
            checks.noException("a 5000-byte record under max.message.bytes=10000 is accepted",
                () -> p.send(new ProducerRecord<>(topic, 0, null, new byte[5000])).get());
            checks.throwsCause("a 20000-byte record over max.message.bytes=10000: RecordTooLargeException",
                org.apache.kafka.common.errors.RecordTooLargeException.class,
                () -> p.send(new ProducerRecord<>(topic, 0, null, new byte[20000])).get());
            checks.noException("the producer goes on after the refusal",
                () -> p.send(new ProducerRecord<>(topic, 0, null, new byte[100])).get());
        }
        try (KafkaConsumer<byte[], byte[]> c = consumer()) {
            TopicPartition tp = new TopicPartition(topic, 0);
            checks.equal("only the two accepted records are in the log", c.endOffsets(List.of(tp)).get(tp), 2L);
        }
    }
}
