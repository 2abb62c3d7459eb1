// Kafka's exactly-once consume-transform-produce loop (KIP-98 / KIP-447),
// with Kafka's own Java clients, as an application built on transactions
// runs it:
//
//   TransformLoop BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID IDLE_MS [PAUSE_MS]
//
// A read_committed consumer in GROUP (static member "transform-1", so that
// a restarted process takes its place at once) reads INPUT; each poll's
// records are written to OUTPUT, each to the partition it came from, and
// the consumer's next offsets are sent to the same transaction, which is
// then committed. A restart with the same TRANSACTIONAL_ID fences the
// previous process and aborts what it left open. Stops after IDLE_MS
// without a record. stdout: one JSON line per committed transaction
// ({"committed": records so far}), then {"result": {...}}; exit 0, or 2 on
// an error (printed). PAUSE_MS: after a transaction's records are sent and
// flushed, wait that long before committing (so that a kill is likely to
// leave a transaction open with its records written).

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
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

public final class TransformLoop {
    public static void main(String[] args) {
        if (args.length != 6 && args.length != 7) {
            System.out.println("{\"error\": \"usage: TransformLoop BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID IDLE_MS [PAUSE_MS]\"}");
            System.exit(2);
        }
        String bootstrap = args[0], input = args[1], output = args[2], group = args[3], txnId = args[4];
        long idleMs = Long.parseLong(args[5]);
        long pauseMs = args.length == 7 ? Long.parseLong(args[6]) : 0;

        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        c.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "transform-1");
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "500");
        c.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());

        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "10000");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());

        long records = 0, transactions = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c);
             KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            consumer.subscribe(List.of(input));
            long lastRecord = System.currentTimeMillis();
            while (System.currentTimeMillis() - lastRecord < idleMs) {
                ConsumerRecords<byte[], byte[]> polled = consumer.poll(Duration.ofMillis(200));
                if (polled.isEmpty()) continue;
                lastRecord = System.currentTimeMillis();
                producer.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
                for (ConsumerRecord<byte[], byte[]> r : polled) {
                    producer.send(new ProducerRecord<>(output, r.partition(), r.key(), r.value()));
                    next.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                if (pauseMs > 0) {
                    producer.flush();
                    // Written, not committed: a kill from now until the commit leaves an open transaction.
                    System.out.println("{\"open\": " + (records + polled.count()) + "}");
                    System.out.flush();
                    Thread.sleep(pauseMs);
                }
                producer.sendOffsetsToTransaction(next, consumer.groupMetadata());
                producer.commitTransaction();
                records += polled.count();
                transactions++;
                System.out.println("{\"committed\": " + records + "}");
                System.out.flush();
            }
        } catch (Exception e) {
            System.out.println("{\"error\": \"" + e.toString().replace("\\", "\\\\").replace("\"", "'") + "\"}");
            System.exit(2);
        }
        System.out.println("{\"result\": {\"records\": " + records + ", \"transactions\": " + transactions + "}}");
    }
}
