package skewscope.e2e;

import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The job whose placement skewscope predicts:
 *
 * <pre>
 * KafkaSource "Kafka Source" (topics, group id, earliest offsets, discovery every 2 s,
 *   offsets committed on checkpoints; emits In{key = new String(record key, UTF-8),
 *   tag = new String(record value, UTF-8), topic and partition of the ConsumerRecord})
 *   -> "Source Tagger" (a map chained to the source, same parallelism: sets in.sourceSubtask and
 *      in.sourceParallelism from its runtime context, i.e. the source subtask that really read
 *      the record; see {@link SourceTagger} for the fail-once marker)
 *   -> keyBy(in.key), a String
 *   -> "Key Router" (KeyedProcessFunction with a per-key ValueState count; emits one Route per record)
 *   -> KafkaSink "Route Sink" to the output topic:
 *        record key   = the key String (UTF-8),
 *        record value = "subtask,parallelism,maxParallelism,count,hashCode,tag,
 *                        sourceSubtask,sourceParallelism,topic,partition"
 *                       as the keyed subtask saw it (hashCode = key.hashCode(); tag echoes the
 *                       input value, so a caller can match outputs to inputs whose key bytes were
 *                       not valid UTF-8; the last four fields say which source subtask read the
 *                       record from which Kafka partition. Topic names cannot hold commas, so a
 *                       reader splits the first five and the last four fields off and keeps the
 *                       rest, commas and all, as the tag).
 * </pre>
 *
 * Operator uids are fixed so a savepoint restores into a job of another parallelism.
 *
 * <p>Event time ({@link Spec#watermarks} "bounded"): the source's watermark strategy is
 * {@code forBoundedOutOfOrderness(boundMs)} over the Kafka record timestamp, optionally
 * {@code withIdleness(idleMs)} and {@code withWatermarkAlignment(alignGroup, alignDriftMs,
 * alignUpdateMs)}. The watermark flows through "Source Tagger" and the hash edge into "Key Router"
 * (a KeyedProcessFunction), whose input watermark is the minimum over the source subtasks.
 */
public final class SkewJob {
    private SkewJob() {}

    /** What to run; filled from a "submit" command. */
    public static final class Spec {
        public String name;
        public String bootstrap;
        public List<String> topics;
        public String outTopic;
        public String groupId;
        public int sourceParallelism;
        public int keyedParallelism;
        /** -1: leave Flink's default (computed per vertex). */
        public int maxParallelism = -1;
        /** null: fresh start. */
        public String savepoint;
        public long checkpointMs = 2000L;
        /** Where {@link SourceTagger} creates fail-once marker files; null: no fail-once markers. */
        public String markerDir;
        /**
         * "none" (no watermarks, the default) or "bounded": {@code forBoundedOutOfOrderness(boundMs)}
         * on the Kafka record timestamp (the producer's CreateTime), see {@link #watermarkStrategy}.
         */
        public String watermarks = "none";
        /** The bounded out-of-orderness in ms (watermarks=bounded). */
        public long boundMs = 0L;
        /** withIdleness(idleMs) when above 0 (watermarks=bounded); 0: no idle timeout. */
        public long idleMs = 0L;
        /** withWatermarkAlignment(alignGroup, alignDriftMs, alignUpdateMs) when not null (watermarks=bounded). */
        public String alignGroup;
        public long alignDriftMs = 0L;
        public long alignUpdateMs = 1000L;
    }

    /** One input record. */
    public static final class In {
        public String key;
        public String tag;
        public String topic;
        public int partition;
        public int sourceSubtask = -1;
        public int sourceParallelism = -1;

        public In() {}
    }

    /** One routed record. */
    public static final class Route {
        public String key;
        public String tag;
        public String topic;
        public int partition;
        public int sourceSubtask;
        public int sourceParallelism;
        public int hash;
        public int subtask;
        public int parallelism;
        public int maxParallelism;
        public long count;

        public Route() {}
    }

    public static JobGraph jobGraph(Spec s) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.enableCheckpointing(s.checkpointMs);

        KafkaSource<In> source = KafkaSource.<In>builder()
                .setBootstrapServers(s.bootstrap)
                .setTopics(s.topics)
                .setGroupId(s.groupId)
                .setClientIdPrefix(s.groupId)
                .setStartingOffsets(OffsetsInitializer.earliest())
                .setDeserializer(new KeyDeserializer())
                .setProperty("partition.discovery.interval.ms", "2000")
                .setProperty("commit.offsets.on.checkpoint", "true")
                .build();

        DataStream<In> keys = env.fromSource(source, watermarkStrategy(s), "Kafka Source")
                .setParallelism(s.sourceParallelism)
                .uid("kafka-source")
                .map(new SourceTagger(s.markerDir))
                .name("Source Tagger")
                .uid("source-tagger")
                .setParallelism(s.sourceParallelism);

        SingleOutputStreamOperator<Route> routed = keys
                .keyBy(new Identity(), Types.STRING)
                .process(new KeyRouter())
                .name("Key Router")
                .uid("key-router")
                .setParallelism(s.keyedParallelism);
        if (s.maxParallelism > 0) {
            routed.setMaxParallelism(s.maxParallelism);
        }

        KafkaSink<Route> sink = KafkaSink.<Route>builder()
                .setBootstrapServers(s.bootstrap)
                .setRecordSerializer(new RouteSerializer(s.outTopic))
                .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE)
                .build();
        var sinkOp = routed.sinkTo(sink).name("Route Sink").uid("route-sink").setParallelism(s.keyedParallelism);
        if (s.maxParallelism > 0) {
            sinkOp.setMaxParallelism(s.maxParallelism);
        }

        StreamGraph graph = env.getStreamGraph();
        graph.setJobName(s.name);
        if (s.savepoint != null) {
            graph.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(s.savepoint, false));
        }
        return graph.getJobGraph();
    }

    /**
     * The source's watermark strategy: none, or bounded out-of-orderness over the timestamp the
     * Kafka source hands on with each record (the ConsumerRecord's timestamp: no timestamp
     * assigner is set, so Flink's RecordTimestampAssigner keeps it), with an idle timeout and
     * watermark alignment when asked for.
     */
    static WatermarkStrategy<In> watermarkStrategy(Spec s) {
        switch (s.watermarks) {
            case "none":
                if (s.idleMs > 0 || s.alignGroup != null) {
                    throw new IllegalArgumentException("idleMs= and alignGroup= need watermarks=bounded");
                }
                return WatermarkStrategy.noWatermarks();
            case "bounded":
                break;
            default:
                throw new IllegalArgumentException("watermarks must be none or bounded, not " + s.watermarks);
        }
        if (s.boundMs < 0 || s.idleMs < 0) {
            throw new IllegalArgumentException("boundMs and idleMs must be >= 0");
        }
        WatermarkStrategy<In> w = WatermarkStrategy.forBoundedOutOfOrderness(Duration.ofMillis(s.boundMs));
        if (s.idleMs > 0) {
            w = w.withIdleness(Duration.ofMillis(s.idleMs));
        }
        if (s.alignGroup != null) {
            if (s.alignDriftMs <= 0 || s.alignUpdateMs <= 0) {
                throw new IllegalArgumentException("alignDriftMs and alignUpdateMs must be > 0");
            }
            w = w.withWatermarkAlignment(s.alignGroup, Duration.ofMillis(s.alignDriftMs), Duration.ofMillis(s.alignUpdateMs));
        }
        return w;
    }

    /** Decodes key and value as UTF-8 ("" for null). */
    public static final class KeyDeserializer implements KafkaRecordDeserializationSchema<In> {
        @Override
        public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<In> out) {
            In in = new In();
            in.key = record.key() == null ? "" : new String(record.key(), StandardCharsets.UTF_8);
            in.tag = record.value() == null ? "" : new String(record.value(), StandardCharsets.UTF_8);
            in.topic = record.topic();
            in.partition = record.partition();
            out.collect(in);
        }

        @Override
        public TypeInformation<In> getProducedType() {
            return TypeInformation.of(In.class);
        }
    }

    /** The key of a record that makes {@link SourceTagger} fail once. */
    public static final String FAIL_ONCE_KEY = "skewscope-e2e-fail-once";

    /**
     * Records which source subtask read each record. Chained to the source with the same
     * parallelism, so its subtask index is the reading source subtask's.
     *
     * <p>A record with key {@link #FAIL_ONCE_KEY} and a value of [a-z0-9-]+ makes the subtask
     * that reads it throw, once: it creates markerDir/value and throws only if it created it.
     * The job then fails over (restarts from its last checkpoint under the same job id), reads
     * the record again and passes it on.
     */
    public static final class SourceTagger extends RichMapFunction<In, In> {
        private final String markerDir;

        public SourceTagger(String markerDir) {
            this.markerDir = markerDir;
        }

        @Override
        public In map(In in) throws Exception {
            in.sourceSubtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            in.sourceParallelism = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
            if (FAIL_ONCE_KEY.equals(in.key) && markerDir != null && in.tag.matches("[a-z0-9-]+")) {
                try {
                    Files.createFile(Path.of(markerDir, in.tag));
                } catch (FileAlreadyExistsException done) {
                    return in;
                }
                throw new IllegalStateException("skewscope e2e: fail-once marker " + in.tag + " read by source subtask "
                        + in.sourceSubtask + " from " + in.topic + "-" + in.partition);
            }
            return in;
        }
    }

    /** keyBy the key String, as {@code keyBy(r -> r.key)} does. */
    public static final class Identity implements KeySelector<In, String> {
        @Override
        public String getKey(In value) {
            return value.key;
        }
    }

    /** Keeps a per-key count and reports which subtask holds the key. */
    public static final class KeyRouter extends KeyedProcessFunction<String, In, Route> {
        private transient ValueState<Long> count;

        @Override
        public void open(OpenContext ctx) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
        }

        @Override
        public void processElement(In in, Context ctx, Collector<Route> out) throws Exception {
            Long c = count.value();
            long n = c == null ? 1 : c + 1;
            count.update(n);
            Route r = new Route();
            r.key = in.key;
            r.tag = in.tag;
            r.hash = in.key.hashCode();
            r.subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            r.parallelism = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
            r.maxParallelism = getRuntimeContext().getTaskInfo().getMaxNumberOfParallelSubtasks();
            r.count = n;
            r.topic = in.topic;
            r.partition = in.partition;
            r.sourceSubtask = in.sourceSubtask;
            r.sourceParallelism = in.sourceParallelism;
            out.collect(r);
        }
    }

    /**
     * Route to a Kafka record: key = the key, value =
     * "subtask,parallelism,maxParallelism,count,hashCode,tag,sourceSubtask,sourceParallelism,topic,partition".
     */
    public static final class RouteSerializer implements KafkaRecordSerializationSchema<Route> {
        private final String topic;

        public RouteSerializer(String topic) {
            this.topic = topic;
        }

        @Override
        public ProducerRecord<byte[], byte[]> serialize(Route r, KafkaSinkContext context, Long timestamp) {
            String v = r.subtask + "," + r.parallelism + "," + r.maxParallelism + "," + r.count + "," + r.hash + "," + r.tag
                    + "," + r.sourceSubtask + "," + r.sourceParallelism + "," + r.topic + "," + r.partition;
            return new ProducerRecord<>(topic, r.key.getBytes(StandardCharsets.UTF_8), v.getBytes(StandardCharsets.UTF_8));
        }
    }
}
