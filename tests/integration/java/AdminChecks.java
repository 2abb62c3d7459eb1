import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.*;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Kafka's AdminClient: topics (create with configs, validateOnly and the
 * errors Kafka gives, list, describe by name and by id, createPartitions,
 * delete by name and by id), configs (describeConfigs for a topic and the
 * broker, incrementalAlterConfigs SET/DELETE/validateOnly; the 4.x Admin has
 * no non-incremental alterConfigs), offsets
 * (listOffsets earliest/latest/timestamp/max-timestamp, deleteRecords),
 * describeCluster, and consumer groups (list, describe, offsets: list,
 * alter, delete; delete groups).
 *
 * Usage: AdminChecks BOOTSTRAP [name=value...]: broker configs that
 * describeConfigs of the broker must report with these values.
 */
public class AdminChecks {
    static String bootstrap;
    static final Checks checks = new Checks("");
    static Admin admin;
    static Map<String, String> brokerExpect = new TreeMap<>();
    static int nodeId = -1;

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        for (int i = 1; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            brokerExpect.put(kv[0], kv[1]);
        }
        admin = Admin.create(Checks.props(bootstrap, "request.timeout.ms", "15000", "default.api.timeout.ms", "30000"));
        try {
            checks.section("cluster", AdminChecks::cluster);
            checks.section("create topics", AdminChecks::createTopics);
            checks.section("describe topics", AdminChecks::describeTopics);
            checks.section("topic configs", AdminChecks::topicConfigs);
            checks.section("broker configs", AdminChecks::brokerConfigs);
            checks.section("offsets", AdminChecks::offsets);
            checks.section("consumer groups", AdminChecks::groups);
            checks.section("delete topics", AdminChecks::deleteTopics);
        } finally {
            admin.close(Duration.ofSeconds(10));
        }
        System.exit(checks.finish());
    }

    static Throwable error(Runnable r) {
        try {
            r.run();
            return null;
        } catch (Throwable t) {
            return Checks.unwrap(t);
        }
    }

    // ------------------------------------------------------------------ cluster

    static void cluster() throws Exception {
        DescribeClusterResult r = admin.describeCluster();
        Collection<Node> nodes = r.nodes().get();
        checks.equal("describeCluster lists one node", nodes.size(), 1);
        Node node = nodes.iterator().next();
        nodeId = node.id();
        String port = bootstrap.substring(bootstrap.lastIndexOf(':') + 1);
        checks.check("the node is the bootstrap address", node.host().equals("127.0.0.1") && String.valueOf(node.port()).equals(port),
                     node);
        if (brokerExpect.containsKey("node.id")) {
            checks.equal("the node id is node.id", String.valueOf(node.id()), brokerExpect.get("node.id"));
        }
        Node controller = r.controller().get();
        checks.check("describeCluster names a controller among the nodes", controller != null && controller.id() == node.id(), controller);
        String clusterId = r.clusterId().get();
        checks.check("describeCluster gives a cluster id", clusterId != null && !clusterId.isEmpty(), clusterId);
        // The same id through Metadata (what describeCluster falls back to) is not checked here: one path suffices.
        Set<?> ops = admin.describeCluster(new DescribeClusterOptions().includeAuthorizedOperations(true))
            .authorizedOperations().get();
        checks.check("describeCluster with includeAuthorizedOperations answers", true, ops);
    }

    // ------------------------------------------------------------------ topics

    static Uuid plainId;
    static boolean compressedCreated;

    static void createTopics() throws Exception {
        CreateTopicsResult r = admin.createTopics(List.of(new NewTopic("adm-plain", 3, (short) 1)));
        checks.noException("createTopics 3 partitions", () -> r.all().get());
        checks.equal("createTopics result: partitions", r.numPartitions("adm-plain").get(), 3);
        checks.equal("createTopics result: replication factor", r.replicationFactor("adm-plain").get(), 1);
        plainId = r.topicId("adm-plain").get();
        checks.check("createTopics result: a topic id", plainId != null && !plainId.equals(Uuid.ZERO_UUID), plainId);
        Config created = r.config("adm-plain").get();
        checks.check("createTopics result: the topic's configs", created != null && created.get("retention.ms") != null,
                     created);

        Map<String, String> cfg = new LinkedHashMap<>();
        cfg.put("retention.ms", "3600000");
        cfg.put("cleanup.policy", "delete");
        cfg.put("max.message.bytes", "500000");
        cfg.put("segment.bytes", "1048576");
        checks.noException("createTopics with configs (retention.ms, cleanup.policy, max.message.bytes, segment.bytes)",
            () -> admin.createTopics(List.of(new NewTopic("adm-configured", 2, (short) 1).configs(cfg))).all().get());
        // A topic-level compression.type: Kafka recompresses to it; Eddy stores
        // batches as the producer compressed them (zero-copy reads), so it
        // refuses any value but producer, with the reason (a deliberate difference).
        checks.throwsCause("createTopics with compression.type=gzip: InvalidConfigurationException (Eddy never re-compresses)",
            org.apache.kafka.common.errors.InvalidConfigurationException.class,
            () -> admin.createTopics(List.of(new NewTopic("adm-compressed", 1, (short) 1)
                .configs(Map.of("compression.type", "gzip")))).all().get());
        compressedCreated = checks.noException("createTopics with compression.type=producer",
            () -> admin.createTopics(List.of(new NewTopic("adm-compressed", 1, (short) 1)
                .configs(Map.of("compression.type", "producer")))).all().get());
        checks.noException("createTopics of two topics in one request",
            () -> admin.createTopics(List.of(new NewTopic("adm-byid", 1, (short) 1), new NewTopic("adm-second", 2, (short) 1))).all().get());
        checks.noException("createTopics with default partitions and replication (Optional.empty)",
            () -> admin.createTopics(List.of(new NewTopic("adm-defaults", Optional.empty(), Optional.empty()))).all().get());

        checks.throwsCause("createTopics of an existing topic: TopicExistsException", TopicExistsException.class,
            () -> admin.createTopics(List.of(new NewTopic("adm-plain", 3, (short) 1))).all().get());
        checks.throwsCause("createTopics with 0 partitions: InvalidPartitionsException", InvalidPartitionsException.class,
            () -> admin.createTopics(List.of(new NewTopic("adm-zero", 0, (short) 1))).all().get());
        checks.throwsCause("createTopics with replication factor 3 on one broker: InvalidReplicationFactorException",
            InvalidReplicationFactorException.class,
            () -> admin.createTopics(List.of(new NewTopic("adm-rf3", 1, (short) 3))).all().get());
        checks.throwsCause("createTopics with an invalid name: InvalidTopicException", InvalidTopicException.class,
            () -> admin.createTopics(List.of(new NewTopic("bad/name", 1, (short) 1))).all().get());
        checks.throwsCause("createTopics with an unknown config: InvalidConfigurationException",
            InvalidConfigurationException.class,
            () -> admin.createTopics(List.of(new NewTopic("adm-badcfg", 1, (short) 1)
                .configs(Map.of("no.such.config", "1")))).all().get());
        checks.throwsCause("createTopics with a bad config value: InvalidConfigurationException",
            InvalidConfigurationException.class,
            () -> admin.createTopics(List.of(new NewTopic("adm-badval", 1, (short) 1)
                .configs(Map.of("retention.ms", "soon")))).all().get());
        checks.noException("createTopics validateOnly",
            () -> admin.createTopics(List.of(new NewTopic("adm-validate", 1, (short) 1)),
                                     new CreateTopicsOptions().validateOnly(true)).all().get());

        Set<String> names = admin.listTopics().names().get();
        checks.check("listTopics has the created topics", names.containsAll(List.of("adm-plain", "adm-byid", "adm-second", "adm-defaults")), names);
        checks.check("listTopics lacks the validateOnly and refused topics",
                     Collections.disjoint(names, List.of("adm-validate", "adm-zero", "adm-rf3", "bad/name", "adm-badcfg", "adm-badval")), names);
        Map<String, TopicListing> listings = admin.listTopics().namesToListings().get();
        checks.check("listTopics: topic id and not internal", listings.containsKey("adm-plain")
                     && plainId.equals(listings.get("adm-plain").topicId()) && !listings.get("adm-plain").isInternal(),
                     listings.get("adm-plain"));
    }

    static void describeTopics() throws Exception {
        TopicDescription d = admin.describeTopics(List.of("adm-plain")).allTopicNames().get().get("adm-plain");
        checks.equal("describeTopics: 3 partitions", d.partitions().size(), 3);
        boolean replicas = true;
        for (TopicPartitionInfo p : d.partitions()) {
            replicas &= p.leader() != null && p.leader().id() == nodeId && p.replicas().size() == 1
                && p.replicas().get(0).id() == nodeId && p.isr().size() == 1 && p.isr().get(0).id() == nodeId;
        }
        checks.check("describeTopics: leader, replicas and isr are the broker", replicas, d);
        checks.equal("describeTopics: the topic id of createTopics", d.topicId(), plainId);
        checks.check("describeTopics: not internal", !d.isInternal());
        checks.section("describeTopics by topic id", () -> {
            Map<Uuid, TopicDescription> byId = admin.describeTopics(TopicCollection.ofTopicIds(List.of(plainId))).allTopicIds().get();
            checks.check("describeTopics by topic id", byId.containsKey(plainId) && "adm-plain".equals(byId.get(plainId).name())
                         && byId.get(plainId).partitions().size() == 3, byId);
        });
        checks.throwsCause("describeTopics of a missing topic: UnknownTopicOrPartitionException",
            UnknownTopicOrPartitionException.class, () -> admin.describeTopics(List.of("adm-missing")).allTopicNames().get());
        checks.throwsCause("describeTopics of an unknown topic id: UnknownTopicIdException",
            UnknownTopicIdException.class,
            () -> admin.describeTopics(TopicCollection.ofTopicIds(List.of(Uuid.randomUuid()))).allTopicIds().get());

        checks.noException("createPartitions 3 -> 5",
            () -> admin.createPartitions(Map.of("adm-plain", NewPartitions.increaseTo(5))).all().get());
        checks.equal("describeTopics after createPartitions: 5 partitions",
            admin.describeTopics(List.of("adm-plain")).allTopicNames().get().get("adm-plain").partitions().size(), 5);
        checks.throwsCause("createPartitions to fewer partitions: InvalidPartitionsException", InvalidPartitionsException.class,
            () -> admin.createPartitions(Map.of("adm-plain", NewPartitions.increaseTo(2))).all().get());
        checks.throwsCause("createPartitions of a missing topic: UnknownTopicOrPartitionException",
            UnknownTopicOrPartitionException.class,
            () -> admin.createPartitions(Map.of("adm-missing", NewPartitions.increaseTo(2))).all().get());
    }

    // ------------------------------------------------------------------ configs

    static Config topicConfig(String topic) throws Exception {
        ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        return admin.describeConfigs(List.of(res)).all().get().get(res);
    }

    static String entry(Config c, String name) {
        ConfigEntry e = c.get(name);
        return e == null ? "absent" : e.value() + " (" + e.source() + ")";
    }

    static void topicConfigs() throws Exception {
        checks.section("configs set at creation", AdminChecks::configsAtCreation);
        checks.section("incrementalAlterConfigs", AdminChecks::alterConfigs);
    }

    static void configsAtCreation() throws Exception {
        Config c = topicConfig("adm-configured");
        checks.equal("describeConfigs: retention.ms set at creation", entry(c, "retention.ms"), "3600000 (DYNAMIC_TOPIC_CONFIG)");
        checks.equal("describeConfigs: max.message.bytes set at creation", entry(c, "max.message.bytes"), "500000 (DYNAMIC_TOPIC_CONFIG)");
        checks.equal("describeConfigs: segment.bytes set at creation", entry(c, "segment.bytes"), "1048576 (DYNAMIC_TOPIC_CONFIG)");
        checks.equal("describeConfigs: cleanup.policy set at creation", entry(c, "cleanup.policy"), "delete (DYNAMIC_TOPIC_CONFIG)");
        ConfigEntry seg = c.get("retention.bytes");
        checks.check("describeConfigs: a default config (retention.bytes) is listed, not as a topic override",
                     seg != null && seg.value() != null && seg.source() != ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, seg);
        if (compressedCreated) {  // (else its creation failed, already a failed check)
            checks.section("compression.type set at creation", () -> checks.equal("describeConfigs: compression.type set at creation",
                entry(topicConfig("adm-compressed"), "compression.type"), "producer (DYNAMIC_TOPIC_CONFIG)"));
        }
    }

    static void alterConfigs() throws Exception {
        Config c;
        Config plain = topicConfig("adm-plain");
        for (String name : List.of("cleanup.policy", "compression.type", "retention.bytes", "min.insync.replicas",
                                   "message.timestamp.type", "segment.ms", "min.cleanable.dirty.ratio")) {
            ConfigEntry e = plain.get(name);
            checks.check("describeConfigs of a topic lists Kafka's " + name, e != null && e.value() != null, e);
        }
        String defaultRetention = plain.get("retention.ms") == null ? null : plain.get("retention.ms").value();

        ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, "adm-plain");
        checks.noException("incrementalAlterConfigs SET retention.ms and max.message.bytes",
            () -> admin.incrementalAlterConfigs(Map.of(res, List.of(
                new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("max.message.bytes", "600000"), AlterConfigOp.OpType.SET)))).all().get());
        c = topicConfig("adm-plain");
        checks.equal("after SET: retention.ms", entry(c, "retention.ms"), "7200000 (DYNAMIC_TOPIC_CONFIG)");
        checks.equal("after SET: max.message.bytes", entry(c, "max.message.bytes"), "600000 (DYNAMIC_TOPIC_CONFIG)");
        checks.throwsCause("incrementalAlterConfigs SET compression.type=zstd: InvalidConfigurationException (Eddy never re-compresses)",
            org.apache.kafka.common.errors.InvalidConfigurationException.class,
            () -> admin.incrementalAlterConfigs(Map.of(res, List.of(
                new AlterConfigOp(new ConfigEntry("compression.type", "zstd"), AlterConfigOp.OpType.SET)))).all().get());
        if (checks.noException("incrementalAlterConfigs SET compression.type=producer",
                () -> admin.incrementalAlterConfigs(Map.of(res, List.of(
                    new AlterConfigOp(new ConfigEntry("compression.type", "producer"), AlterConfigOp.OpType.SET)))).all().get())) {
            checks.equal("after SET: compression.type", entry(topicConfig("adm-plain"), "compression.type"), "producer (DYNAMIC_TOPIC_CONFIG)");
        }

        checks.noException("incrementalAlterConfigs DELETE retention.ms",
            () -> admin.incrementalAlterConfigs(Map.of(res, List.of(
                new AlterConfigOp(new ConfigEntry("retention.ms", ""), AlterConfigOp.OpType.DELETE)))).all().get());
        c = topicConfig("adm-plain");
        ConfigEntry r = c.get("retention.ms");
        checks.check("after DELETE: retention.ms back to its default, not a topic override",
                     r != null && Objects.equals(r.value(), defaultRetention) && r.source() != ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG,
                     r + ", default " + defaultRetention);
        checks.equal("after DELETE: the other override stays", entry(c, "max.message.bytes"), "600000 (DYNAMIC_TOPIC_CONFIG)");

        checks.noException("incrementalAlterConfigs validateOnly",
            () -> admin.incrementalAlterConfigs(Map.of(res, List.of(
                new AlterConfigOp(new ConfigEntry("max.message.bytes", "700000"), AlterConfigOp.OpType.SET))),
                new AlterConfigsOptions().validateOnly(true)).all().get());
        checks.equal("validateOnly changes nothing", entry(topicConfig("adm-plain"), "max.message.bytes"), "600000 (DYNAMIC_TOPIC_CONFIG)");

        checks.throwsCause("incrementalAlterConfigs of an unknown config: InvalidConfigurationException",
            InvalidConfigurationException.class,
            () -> admin.incrementalAlterConfigs(Map.of(res, List.of(
                new AlterConfigOp(new ConfigEntry("no.such.config", "1"), AlterConfigOp.OpType.SET)))).all().get());
        checks.throwsCause("incrementalAlterConfigs with a bad value: InvalidConfigurationException",
            InvalidConfigurationException.class,
            () -> admin.incrementalAlterConfigs(Map.of(res, List.of(
                new AlterConfigOp(new ConfigEntry("retention.ms", "soon"), AlterConfigOp.OpType.SET)))).all().get());
        ConfigResource missing = new ConfigResource(ConfigResource.Type.TOPIC, "adm-missing");
        checks.throwsCause("incrementalAlterConfigs of a missing topic: UnknownTopicOrPartitionException",
            UnknownTopicOrPartitionException.class,
            () -> admin.incrementalAlterConfigs(Map.of(missing, List.of(
                new AlterConfigOp(new ConfigEntry("retention.ms", "1000"), AlterConfigOp.OpType.SET)))).all().get());
        checks.throwsCause("describeConfigs of a missing topic: UnknownTopicOrPartitionException",
            UnknownTopicOrPartitionException.class, () -> admin.describeConfigs(List.of(missing)).all().get());

        Config docs = admin.describeConfigs(List.of(res), new DescribeConfigsOptions().includeDocumentation(true)
            .includeSynonyms(true)).all().get().get(res);
        ConfigEntry rd = docs.get("retention.ms");
        checks.check("describeConfigs includeDocumentation: retention.ms has documentation and a type",
                     rd != null && rd.documentation() != null && !rd.documentation().isEmpty()
                     && rd.type() == ConfigEntry.ConfigType.LONG, rd);
        ConfigEntry md = docs.get("max.message.bytes");
        checks.check("describeConfigs includeSynonyms: the topic override is the first synonym",
                     md != null && !md.synonyms().isEmpty() && md.synonyms().get(0).name().equals("max.message.bytes")
                     && md.synonyms().get(0).source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG
                     && "600000".equals(md.synonyms().get(0).value()), md);
        checks.check("describeConfigs includeSynonyms: the broker default follows (message.max.bytes)",
                     md != null && md.synonyms().stream().anyMatch(y -> y.name().equals("message.max.bytes")), md);
    }

    static void brokerConfigs() throws Exception {
        ConfigResource res = new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(nodeId));
        Config c = admin.describeConfigs(List.of(res)).all().get().get(res);
        checks.check("describeConfigs of the broker lists configs", c.entries().size() > 5, c.entries().size() + " entries");
        for (String name : List.of("log.segment.bytes", "num.partitions", "auto.create.topics.enable", "log.retention.hours",
                                   "message.max.bytes")) {
            ConfigEntry e = c.get(name);
            checks.check("describeConfigs of the broker lists " + name, e != null && e.value() != null, e);
        }
        for (Map.Entry<String, String> want : brokerExpect.entrySet()) {
            if (want.getKey().equals("node.id")) continue;
            ConfigEntry e = c.get(want.getKey());
            checks.equal("broker config " + want.getKey() + " has its configured value", e == null ? "absent" : e.value(),
                         want.getValue());
        }
        // (describeConfigs of another broker id is not asked: the Admin sends it to that broker
        // and waits for it until its timeout, against Kafka as well.)
    }

    // ------------------------------------------------------------------ offsets

    static KafkaProducer<String, String> producer() {
        return new KafkaProducer<>(Checks.props(bootstrap, "acks", "all", "linger.ms", "0",
            "key.serializer", StringSerializer.class.getName(), "value.serializer", StringSerializer.class.getName()));
    }

    static ListOffsetsResult.ListOffsetsResultInfo list(TopicPartition tp, OffsetSpec spec) throws Exception {
        return admin.listOffsets(Map.of(tp, spec)).partitionResult(tp).get();
    }

    static String info(ListOffsetsResult.ListOffsetsResultInfo i) {
        return i.offset() + "@" + i.timestamp();
    }

    static void offsets() throws Exception {
        checks.noException("create adm-offsets", () -> admin.createTopics(List.of(new NewTopic("adm-offsets", 1, (short) 1))).all().get());
        TopicPartition tp = new TopicPartition("adm-offsets", 0);
        long base = (System.currentTimeMillis() / 1000) * 1000 - 120_000;
        try (KafkaProducer<String, String> p = producer()) {
            for (int i = 0; i < 10; i++) p.send(new ProducerRecord<>(tp.topic(), 0, base + i * 1000L, null, "v" + i)).get();
        }
        checks.equal("listOffsets earliest", list(tp, OffsetSpec.earliest()).offset(), 0L);
        checks.equal("listOffsets latest", list(tp, OffsetSpec.latest()).offset(), 10L);
        checks.equal("listOffsets forTimestamp between records", info(list(tp, OffsetSpec.forTimestamp(base + 3500))),
                     4 + "@" + (base + 4000));
        checks.equal("listOffsets forTimestamp exact", info(list(tp, OffsetSpec.forTimestamp(base + 6000))), 6 + "@" + (base + 6000));
        checks.equal("listOffsets forTimestamp after the last record: -1", list(tp, OffsetSpec.forTimestamp(base + 60_000)).offset(), -1L);
        checks.equal("listOffsets maxTimestamp", info(list(tp, OffsetSpec.maxTimestamp())), 9 + "@" + (base + 9000));
        checks.equal("listOffsets latest read_committed", admin.listOffsets(Map.of(tp, OffsetSpec.latest()),
            new ListOffsetsOptions(org.apache.kafka.common.IsolationLevel.READ_COMMITTED)).partitionResult(tp).get().offset(), 10L);
        checks.section("listOffsets inside one compressed batch", () -> {
            TopicPartition z = new TopicPartition("adm-offsets-lz4", 0);
            admin.createTopics(List.of(new NewTopic(z.topic(), 1, (short) 1))).all().get();
            try (KafkaProducer<String, String> p = new KafkaProducer<>(Checks.props(bootstrap, "acks", "all",
                    "linger.ms", "60000", "batch.size", "1000000", "compression.type", "lz4",
                    "key.serializer", StringSerializer.class.getName(), "value.serializer", StringSerializer.class.getName()))) {
                for (int i = 0; i < 10; i++) p.send(new ProducerRecord<>(z.topic(), 0, base + i * 1000L, null, "z" + i));
                p.flush();  // the ten records in one lz4 batch
            }
            checks.equal("listOffsets forTimestamp inside an lz4 batch: the record's offset",
                         info(list(z, OffsetSpec.forTimestamp(base + 3500))), 4 + "@" + (base + 4000));
            checks.equal("listOffsets maxTimestamp inside an lz4 batch: the record's offset",
                         info(list(z, OffsetSpec.maxTimestamp())), 9 + "@" + (base + 9000));
        });
        TopicPartition missing = new TopicPartition("adm-missing", 0);
        checks.throwsCause("listOffsets of a missing topic: UnknownTopicOrPartitionException",
            UnknownTopicOrPartitionException.class, () -> admin.listOffsets(Map.of(missing, OffsetSpec.latest())).all().get());

        DeleteRecordsResult dr = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(4)));
        checks.equal("deleteRecords before 4: low watermark 4", dr.lowWatermarks().get(tp).get().lowWatermark(), 4L);
        checks.equal("listOffsets earliest after deleteRecords", list(tp, OffsetSpec.earliest()).offset(), 4L);
        checks.equal("listOffsets latest after deleteRecords", list(tp, OffsetSpec.latest()).offset(), 10L);
        checks.equal("listOffsets forTimestamp before the new start: the new start",
                     list(tp, OffsetSpec.forTimestamp(base)).offset(), 4L);
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(Checks.props(bootstrap,
                "key.deserializer", StringDeserializer.class.getName(), "value.deserializer", StringDeserializer.class.getName(),
                "auto.offset.reset", "earliest"))) {
            c.assign(List.of(tp));
            checks.equal("consumer beginningOffsets after deleteRecords", c.beginningOffsets(List.of(tp)).get(tp), 4L);
            c.seekToBeginning(List.of(tp));
            ConsumerRecord<String, String> first = null;
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (first == null && System.nanoTime() < deadline) {
                var rs = c.poll(Duration.ofMillis(200));
                if (!rs.isEmpty()) first = rs.iterator().next();
            }
            checks.check("the consumer reads from the new start", first != null && first.offset() == 4 && "v4".equals(first.value()), first);
            c.seek(tp, 1);
            // Below the log start: auto.offset.reset=earliest takes the consumer back to 4.
            first = null;
            deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (first == null && System.nanoTime() < deadline) {
                var rs = c.poll(Duration.ofMillis(200));
                if (!rs.isEmpty()) first = rs.iterator().next();
            }
            checks.check("a fetch below the log start resets to it (OFFSET_OUT_OF_RANGE then earliest)",
                         first != null && first.offset() == 4, first);
        }
        checks.throwsCause("deleteRecords beyond the high watermark: OffsetOutOfRangeException", OffsetOutOfRangeException.class,
            () -> admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(100))).all().get());
        dr = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(-1)));
        checks.equal("deleteRecords before -1 (the high watermark): low watermark 10", dr.lowWatermarks().get(tp).get().lowWatermark(), 10L);
        checks.equal("listOffsets earliest == latest after deleting everything", list(tp, OffsetSpec.earliest()).offset(), 10L);
    }

    // ------------------------------------------------------------------ groups

    static void groups() throws Exception {
        String topic = "adm-group-topic", group = "adm-group";
        checks.noException("create adm-group-topic", () -> admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get());
        TopicPartition p0 = new TopicPartition(topic, 0), p1 = new TopicPartition(topic, 1);
        try (KafkaProducer<String, String> p = producer()) {
            for (int i = 0; i < 10; i++) {
                p.send(new ProducerRecord<>(topic, 0, null, "a" + i));
                p.send(new ProducerRecord<>(topic, 1, null, "b" + i));
            }
            p.flush();
        }
        KafkaConsumer<String, String> c = new KafkaConsumer<>(Checks.props(bootstrap, "group.id", group, "client.id", "adm-member",
            "key.deserializer", StringDeserializer.class.getName(), "value.deserializer", StringDeserializer.class.getName(),
            "auto.offset.reset", "earliest", "enable.auto.commit", "false", "session.timeout.ms", "30000"));
        try {
            c.subscribe(List.of(topic));
            int got = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (got < 20 && System.nanoTime() < deadline) got += c.poll(Duration.ofMillis(100)).count();
            checks.equal("the group member consumed everything", got, 20);
            c.commitSync();

            // The member stays in the group while the admin looks at it (heartbeats run in the background).
            ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
            checks.equal("describeConsumerGroups: state Stable", d.groupState(), GroupState.STABLE);
            checks.equal("describeConsumerGroups: classic group type", d.type(), GroupType.CLASSIC);
            checks.equal("describeConsumerGroups: assignor", d.partitionAssignor(), "range");
            checks.check("describeConsumerGroups: not a simple group", !d.isSimpleConsumerGroup());
            checks.check("describeConsumerGroups: coordinator is the broker", d.coordinator() != null && d.coordinator().id() == nodeId,
                         d.coordinator());
            checks.equal("describeConsumerGroups: one member", d.members().size(), 1);
            if (d.members().size() == 1) {
                MemberDescription m = d.members().iterator().next();
                checks.equal("describeConsumerGroups: member client id", m.clientId(), "adm-member");
                checks.equal("describeConsumerGroups: member id is the consumer's", m.consumerId(), c.groupMetadata().memberId());
                checks.check("describeConsumerGroups: member host", m.host() != null && m.host().contains("127.0.0.1"), m.host());
                checks.equal("describeConsumerGroups: member assignment", m.assignment().topicPartitions(), Set.of(p0, p1));
            }
            Collection<ConsumerGroupListing> listed = admin.listConsumerGroups().all().get();
            ConsumerGroupListing mine = listed.stream().filter(l -> l.groupId().equals(group)).findFirst().orElse(null);
            checks.check("listConsumerGroups has the group, state Stable, not simple", mine != null
                         && mine.groupState().orElse(null) == GroupState.STABLE && !mine.isSimpleConsumerGroup(), listed);
            Collection<GroupListing> all = admin.listGroups().all().get();
            checks.check("listGroups has the group as a classic consumer group", all.stream().anyMatch(l -> l.groupId().equals(group)
                         && l.type().orElse(null) == GroupType.CLASSIC && "consumer".equals(l.protocol())), all);
            Collection<ConsumerGroupListing> stable = admin.listConsumerGroups(
                new ListConsumerGroupsOptions().inGroupStates(Set.of(GroupState.STABLE))).all().get();
            checks.check("listConsumerGroups filtered by state Stable has it", stable.stream().anyMatch(l -> l.groupId().equals(group)), stable);
            Collection<ConsumerGroupListing> empty = admin.listConsumerGroups(
                new ListConsumerGroupsOptions().inGroupStates(Set.of(GroupState.EMPTY))).all().get();
            checks.check("listConsumerGroups filtered by state Empty lacks it", empty.stream().noneMatch(l -> l.groupId().equals(group)), empty);

            Map<TopicPartition, OffsetAndMetadata> offs = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            checks.check("listConsumerGroupOffsets: the committed offsets", offs.get(p0) != null && offs.get(p0).offset() == 10
                         && offs.get(p1) != null && offs.get(p1).offset() == 10, offs);
            checks.throwsCause("alterConsumerGroupOffsets of an active group: UnknownMemberIdException",
                UnknownMemberIdException.class,
                () -> admin.alterConsumerGroupOffsets(group, Map.of(p0, new OffsetAndMetadata(1))).all().get());
            checks.throwsCause("deleteConsumerGroupOffsets of a subscribed topic: GroupSubscribedToTopicException",
                GroupSubscribedToTopicException.class,
                () -> admin.deleteConsumerGroupOffsets(group, Set.of(p0)).all().get());
            checks.throwsCause("deleteConsumerGroups of an active group: GroupNotEmptyException", GroupNotEmptyException.class,
                () -> admin.deleteConsumerGroups(List.of(group)).all().get());
        } finally {
            c.close(Duration.ofSeconds(10));
        }

        ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
        checks.check("after the member left: state Empty, no members", d.groupState() == GroupState.EMPTY && d.members().isEmpty(), d);

        checks.noException("alterConsumerGroupOffsets of the empty group",
            () -> admin.alterConsumerGroupOffsets(group, Map.of(p0, new OffsetAndMetadata(3, "moved"), p1, new OffsetAndMetadata(4)))
                .all().get());
        Map<TopicPartition, OffsetAndMetadata> offs = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
        checks.check("listConsumerGroupOffsets after alter: offsets and metadata", offs.get(p0) != null && offs.get(p0).offset() == 3
                     && "moved".equals(offs.get(p0).metadata()) && offs.get(p1) != null && offs.get(p1).offset() == 4, offs);
        Map<TopicPartition, OffsetAndMetadata> some = admin.listConsumerGroupOffsets(Map.of(group,
            new ListConsumerGroupOffsetsSpec().topicPartitions(List.of(p1)))).partitionsToOffsetAndMetadata(group).get();
        checks.check("listConsumerGroupOffsets of named partitions", some.size() == 1 && some.get(p1) != null
                     && some.get(p1).offset() == 4, some);

        checks.noException("deleteConsumerGroupOffsets of one partition",
            () -> admin.deleteConsumerGroupOffsets(group, Set.of(p0)).all().get());
        offs = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
        checks.check("after deleteConsumerGroupOffsets only the other partition has an offset",
                     !offs.containsKey(p0) || offs.get(p0) == null, offs);
        checks.check("the other partition keeps its offset", offs.get(p1) != null && offs.get(p1).offset() == 4, offs);

        // A group that only ever committed offsets (no members): a simple consumer group.
        String simple = "adm-simple";
        checks.noException("alterConsumerGroupOffsets creates a new group",
            () -> admin.alterConsumerGroupOffsets(simple, Map.of(p1, new OffsetAndMetadata(2))).all().get());
        Collection<ConsumerGroupListing> listed = admin.listConsumerGroups().all().get();
        checks.check("listConsumerGroups has the offsets-only group", listed.stream().anyMatch(l -> l.groupId().equals(simple)), listed);
        ConsumerGroupDescription sd = admin.describeConsumerGroups(List.of(simple)).all().get().get(simple);
        checks.check("describeConsumerGroups of the offsets-only group: Empty, simple", sd.groupState() == GroupState.EMPTY
                     && sd.isSimpleConsumerGroup() && sd.members().isEmpty(), sd);
        checks.noException("deleteConsumerGroups", () -> admin.deleteConsumerGroups(List.of(simple, group)).all().get());
        listed = admin.listConsumerGroups().all().get();
        checks.check("listConsumerGroups lacks the deleted groups",
                     listed.stream().noneMatch(l -> l.groupId().equals(simple) || l.groupId().equals(group)), listed);
        checks.check("listConsumerGroupOffsets of a deleted group is empty",
                     admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().isEmpty());
        // Kafka 4.x answers DescribeGroups v6 for an unknown group with GROUP_ID_NOT_FOUND (v5 and older: a
        // Dead group without error, which the Admin returns as a description).
        // Eddy speaks DescribeGroups up to v5 (Kafka 3.9's protocol), where a
        // missing group is described as Dead; v6 (Kafka 4) answers
        // GROUP_ID_NOT_FOUND instead.
        checks.equal("describeConsumerGroups of a missing group (DescribeGroups v5): state DEAD",
            String.valueOf(admin.describeConsumerGroups(List.of("adm-no-such-group")).all().get()
                .get("adm-no-such-group").groupState()), String.valueOf(GroupState.DEAD));
        checks.throwsCause("deleteConsumerGroups of a missing group: GroupIdNotFoundException", GroupIdNotFoundException.class,
            () -> admin.deleteConsumerGroups(List.of("adm-no-such-group")).all().get());
    }

    // ------------------------------------------------------------------ delete

    static void deleteTopics() throws Exception {
        checks.noException("deleteTopics by name", () -> admin.deleteTopics(List.of("adm-plain", "adm-defaults")).all().get());
        Uuid byId = admin.describeTopics(List.of("adm-byid")).allTopicNames().get().get("adm-byid").topicId();
        checks.noException("deleteTopics by topic id",
            () -> admin.deleteTopics(TopicCollection.ofTopicIds(List.of(byId))).all().get());
        boolean gone = Checks.waitUntil(Duration.ofSeconds(15), () -> {
            try {
                return Collections.disjoint(admin.listTopics().names().get(), List.of("adm-plain", "adm-defaults", "adm-byid"));
            } catch (Exception e) {
                return false;
            }
        });
        checks.check("listTopics lacks the deleted topics", gone);
        checks.throwsCause("describeTopics of a deleted topic: UnknownTopicOrPartitionException",
            UnknownTopicOrPartitionException.class, () -> admin.describeTopics(List.of("adm-plain")).allTopicNames().get());
        checks.throwsCause("deleteTopics of a missing topic: UnknownTopicOrPartitionException",
            UnknownTopicOrPartitionException.class, () -> admin.deleteTopics(List.of("adm-missing")).all().get());
        checks.throwsCause("deleteTopics of an unknown topic id: UnknownTopicIdException", UnknownTopicIdException.class,
            () -> admin.deleteTopics(TopicCollection.ofTopicIds(List.of(Uuid.randomUuid()))).all().get());
        CreateTopicsResult again = admin.createTopics(List.of(new NewTopic("adm-plain", 1, (short) 1)));
        checks.noException("a deleted topic's name can be created again", () -> again.all().get());
        Uuid newId = again.topicId("adm-plain").get();
        checks.check("the new topic has a new topic id", newId != null && !newId.equals(plainId), newId + " vs " + plainId);
        Config c = topicConfig("adm-plain");
        checks.check("the new topic does not inherit the old one's overrides", c.get("retention.ms") != null
                     && c.get("retention.ms").source() != ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, c.get("retention.ms"));
        checks.equal("the new topic starts empty", list(new TopicPartition("adm-plain", 0), OffsetSpec.latest()).offset(), 0L);
    }
}
