/*
 * Prints every committed record of the given topics as one JSON line each, read with the broker
 * project's own Java client at isolation.level=read_committed. The fault campaign counts records
 * from this view because kafkajs 2.2.4 can hand aborted transactional records to read_committed
 * consumers; the Java client filters them with the broker's aborted-transaction index.
 *
 *   java -cp '<kafka libs>/*' test/support/CommittedReader.java <bootstrap> <timeoutMs> <topic>[:/ptr,..]...
 *
 * Output lines: {"topic":..,"partition":..,"offset":..,"key":..,"value":..} (key and value UTF-8).
 * A topic given as `pages:/request/requestId,/request/url` prints, instead of the whole value, only
 * those JSON pointers of it under "fields" (pages carry bodies the campaign does not need). A framed
 * pages record ("MGP", format byte 1 or 2, 32-bit big-endian header length, JSON header, body) is
 * read through its JSON header.
 * A last line {"end":true,"records":N} says the read reached every partition's last stable offset.
 */
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class CommittedReader {
  public static void main(String[] args) {
    try {
      read(args);
    } catch (Throwable t) {
      // Printed here: the source launcher trims the launcher's frames off a stack trace and fails
      // on one shorter than those ("0 > -7"), hiding the real error.
      System.err.println("CommittedReader: " + t);
      for (StackTraceElement e : t.getStackTrace()) System.err.println("  at " + e);
      System.exit(3);
    }
  }

  private static void read(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println("usage: CommittedReader <bootstrap> <timeoutMs> <topic>...");
      System.exit(64);
    }
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, String.valueOf(16 * 1024 * 1024));
    props.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, String.valueOf(64 * 1024 * 1024));
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    long deadline = System.currentTimeMillis() + Long.parseLong(args[1]);
    ObjectMapper json = new ObjectMapper();
    BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
    long count = 0;
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
      List<TopicPartition> partitions = new ArrayList<>();
      Map<String, String[]> projections = new HashMap<>();
      for (int i = 2; i < args.length; i++) {
        String[] spec = args[i].split(":", 2);
        String topic = spec[0];
        if (spec.length == 2) projections.put(topic, spec[1].split(","));
        List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(30));
        if (infos == null || infos.isEmpty()) throw new IllegalArgumentException("no such topic: " + topic);
        for (PartitionInfo info : infos) partitions.add(new TopicPartition(info.topic(), info.partition()));
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      // read_committed: the end offsets are the last stable offsets.
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
      while (true) {
        boolean done = true;
        for (TopicPartition tp : partitions) {
          if (consumer.position(tp, Duration.ofSeconds(30)) < end.get(tp)) done = false;
        }
        if (done) break;
        if (System.currentTimeMillis() > deadline) {
          System.err.println("CommittedReader: timed out before the end of " + partitions);
          System.exit(2);
        }
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
          if (r.offset() >= end.get(new TopicPartition(r.topic(), r.partition()))) continue;
          ObjectNode line = json.createObjectNode();
          line.put("topic", r.topic());
          line.put("partition", r.partition());
          line.put("offset", r.offset());
          line.put("key", r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8));
          String[] pointers = projections.get(r.topic());
          if (pointers == null || r.value() == null) {
            line.put("value", r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8));
          } else {
            JsonNode value = readJsonValue(json, r.value());
            ObjectNode fields = line.putObject("fields");
            for (String ptr : pointers) {
              JsonNode field = value.at(ptr);
              fields.set(ptr, field.isMissingNode() ? null : field);
            }
          }
          out.write(json.writeValueAsString(line));
          out.write('\n');
          count++;
        }
      }
    }
    out.write("{\"end\":true,\"records\":" + count + "}\n");
    out.flush();
  }

  /** The JSON of a value: the header of a framed pages record, else the value itself. */
  static JsonNode readJsonValue(ObjectMapper json, byte[] value) throws java.io.IOException {
    if (value.length >= 8 && value[0] == 'M' && value[1] == 'G' && value[2] == 'P' && (value[3] == 1 || value[3] == 2)) {
      int headerLength = java.nio.ByteBuffer.wrap(value, 4, 4).getInt();
      return json.readTree(value, 8, headerLength);
    }
    return json.readTree(value);
  }
}
