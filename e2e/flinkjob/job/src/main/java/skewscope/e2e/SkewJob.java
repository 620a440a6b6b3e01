package skewscope.e2e;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
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
 *   tag = new String(record value, UTF-8)})
 *   -> keyBy(in.key), a String
 *   -> "Key Router" (KeyedProcessFunction with a per-key ValueState count; emits one Route per record)
 *   -> KafkaSink "Route Sink" to the output topic:
 *        record key   = the key String (UTF-8),
 *        record value = "subtask,parallelism,maxParallelism,count,hashCode,tag" as the keyed
 *                       subtask saw it (hashCode = key.hashCode(); tag echoes the input value, so
 *                       a caller can match outputs to inputs whose key bytes were not valid UTF-8).
 * </pre>
 *
 * Operator uids are fixed so a savepoint restores into a job of another parallelism.
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
    }

    /** One input record. */
    public static final class In {
        public String key;
        public String tag;

        public In() {}
    }

    /** One routed record. */
    public static final class Route {
        public String key;
        public String tag;
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

        DataStream<In> keys = env.fromSource(source, WatermarkStrategy.noWatermarks(), "Kafka Source")
                .setParallelism(s.sourceParallelism)
                .uid("kafka-source");

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

    /** Decodes key and value as UTF-8 ("" for null). */
    public static final class KeyDeserializer implements KafkaRecordDeserializationSchema<In> {
        @Override
        public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<In> out) {
            In in = new In();
            in.key = record.key() == null ? "" : new String(record.key(), StandardCharsets.UTF_8);
            in.tag = record.value() == null ? "" : new String(record.value(), StandardCharsets.UTF_8);
            out.collect(in);
        }

        @Override
        public TypeInformation<In> getProducedType() {
            return TypeInformation.of(In.class);
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
            out.collect(r);
        }
    }

    /** Route to a Kafka record: key = the key, value = "subtask,parallelism,maxParallelism,count,hashCode,tag". */
    public static final class RouteSerializer implements KafkaRecordSerializationSchema<Route> {
        private final String topic;

        public RouteSerializer(String topic) {
            this.topic = topic;
        }

        @Override
        public ProducerRecord<byte[], byte[]> serialize(Route r, KafkaSinkContext context, Long timestamp) {
            String v = r.subtask + "," + r.parallelism + "," + r.maxParallelism + "," + r.count + "," + r.hash + "," + r.tag;
            return new ProducerRecord<>(topic, r.key.getBytes(StandardCharsets.UTF_8), v.getBytes(StandardCharsets.UTF_8));
        }
    }
}
