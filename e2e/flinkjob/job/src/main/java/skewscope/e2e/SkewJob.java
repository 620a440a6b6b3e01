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
 *   offsets committed on checkpoints; emits the record key as a String)
 *   -> keyBy(key)
 *   -> "Key Router" (KeyedProcessFunction with a per-key ValueState count; emits one Route per record)
 *   -> KafkaSink "Route Sink" to the output topic:
 *        record key   = the input key (UTF-8),
 *        record value = "subtask,parallelism,maxParallelism,count" as the keyed subtask saw it.
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

    /** One routed record. */
    public static final class Route {
        public String key;
        public int subtask;
        public int parallelism;
        public int maxParallelism;
        public long count;

        public Route() {}
    }

    public static JobGraph jobGraph(Spec s) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.enableCheckpointing(s.checkpointMs);

        KafkaSource<String> source = KafkaSource.<String>builder()
                .setBootstrapServers(s.bootstrap)
                .setTopics(s.topics)
                .setGroupId(s.groupId)
                .setClientIdPrefix(s.groupId)
                .setStartingOffsets(OffsetsInitializer.earliest())
                .setDeserializer(new KeyDeserializer())
                .setProperty("partition.discovery.interval.ms", "2000")
                .setProperty("commit.offsets.on.checkpoint", "true")
                .build();

        DataStream<String> keys = env.fromSource(source, WatermarkStrategy.noWatermarks(), "Kafka Source")
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

    /** Emits each record's key (UTF-8; "" for a null key). */
    public static final class KeyDeserializer implements KafkaRecordDeserializationSchema<String> {
        @Override
        public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<String> out) {
            byte[] k = record.key();
            out.collect(k == null ? "" : new String(k, StandardCharsets.UTF_8));
        }

        @Override
        public TypeInformation<String> getProducedType() {
            return Types.STRING;
        }
    }

    /** keyBy the String itself, as {@code keyBy(s -> s)} does. */
    public static final class Identity implements KeySelector<String, String> {
        @Override
        public String getKey(String value) {
            return value;
        }
    }

    /** Keeps a per-key count and reports which subtask holds the key. */
    public static final class KeyRouter extends KeyedProcessFunction<String, String, Route> {
        private transient ValueState<Long> count;

        @Override
        public void open(OpenContext ctx) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
        }

        @Override
        public void processElement(String key, Context ctx, Collector<Route> out) throws Exception {
            Long c = count.value();
            long n = c == null ? 1 : c + 1;
            count.update(n);
            Route r = new Route();
            r.key = key;
            r.subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            r.parallelism = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
            r.maxParallelism = getRuntimeContext().getTaskInfo().getMaxNumberOfParallelSubtasks();
            r.count = n;
            out.collect(r);
        }
    }

    /** Route to a Kafka record: key = the key, value = "subtask,parallelism,maxParallelism,count". */
    public static final class RouteSerializer implements KafkaRecordSerializationSchema<Route> {
        private final String topic;

        public RouteSerializer(String topic) {
            this.topic = topic;
        }

        @Override
        public ProducerRecord<byte[], byte[]> serialize(Route r, KafkaSinkContext context, Long timestamp) {
            String v = r.subtask + "," + r.parallelism + "," + r.maxParallelism + "," + r.count;
            return new ProducerRecord<>(topic, r.key.getBytes(StandardCharsets.UTF_8), v.getBytes(StandardCharsets.UTF_8));
        }
    }
}
