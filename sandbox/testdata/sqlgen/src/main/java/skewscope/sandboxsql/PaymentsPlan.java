package skewscope.sandboxsql;

import java.lang.reflect.Constructor;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.jobgraph.jsonplan.JsonPlanGenerator;
import org.apache.flink.runtime.rest.messages.JobPlanInfo;
import org.apache.flink.runtime.rest.util.RestMapperUtils;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.apache.flink.table.api.bridge.java.StreamStatementSet;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNodeContext;

/**
 * Plans the sandbox's SQL job (payments-by-user) with Flink's own planner and writes, as one JSON
 * file, the statements, the JobGraph's vertex names (what GET /jobs/:id lists as vertex names) and
 * the plan GET /jobs/:id/plan returns (JsonPlanGenerator.generatePlan in the REST handler's
 * JobPlanInfo, serialised by the REST ObjectMapper). Nothing connects to Kafka: planning only.
 */
public final class PaymentsPlan {

    static final String PAYMENTS =
            "CREATE TABLE payments (\n"
                    + "  user_id STRING,\n"
                    + "  region STRING,\n"
                    + "  amount DOUBLE,\n"
                    + "  ts BIGINT,\n"
                    + "  rowtime AS TO_TIMESTAMP_LTZ(ts, 3),\n"
                    + "  WATERMARK FOR rowtime AS rowtime - INTERVAL '1' SECOND\n"
                    + ") WITH (\n"
                    + "  'connector' = 'kafka',\n"
                    + "  'topic' = 'payments',\n"
                    + "  'properties.bootstrap.servers' = '127.0.0.1:9092',\n"
                    + "  'properties.group.id' = 'payments-by-user',\n"
                    + "  'scan.startup.mode' = 'earliest-offset',\n"
                    + "  'format' = 'json'\n"
                    + ")";
    static final String SINK =
            "CREATE TABLE user_totals (user_id STRING, n BIGINT, total DOUBLE) WITH ('connector' = 'blackhole')";
    static final String INSERT =
            "INSERT INTO user_totals SELECT user_id, COUNT(*), SUM(amount) FROM payments GROUP BY user_id";

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: PaymentsPlan OUT.json");
            System.exit(2);
        }
        ObjectMapper mapper = RestMapperUtils.getStrictObjectMapper();
        ExecNodeContext.resetIdCounter();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(4);
        env.configure(Configuration.fromMap(Map.of("pipeline.name", "payments-by-user")), PaymentsPlan.class.getClassLoader());
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        tEnv.executeSql(PAYMENTS);
        tEnv.executeSql(SINK);
        StreamStatementSet set = tEnv.createStatementSet();
        set.addInsertSql(INSERT);
        set.attachAsDataStream();
        StreamGraph streamGraph = env.getStreamGraph();
        // The operators' own names: what their metric scopes are named by.
        List<String> operators = new ArrayList<>();
        for (StreamNode n : streamGraph.getStreamNodes()) {
            operators.add(n.getOperatorName());
        }
        JobGraph jobGraph = streamGraph.getJobGraph(PaymentsPlan.class.getClassLoader(), new JobID(0x5a4db0eL, 1));
        List<Object> vertices = new ArrayList<>();
        for (JobVertex v : jobGraph.getVerticesSortedTopologicallyFromSources()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", v.getID().toString());
            m.put("name", v.getName());
            vertices.add(m);
        }
        Object plan = JsonPlanGenerator.class.getMethod("generatePlan", JobGraph.class).invoke(null, jobGraph);
        Constructor<JobPlanInfo> c = JobPlanInfo.class.getConstructor(plan.getClass());
        JobPlanInfo info = c.newInstance(plan);

        Map<String, Object> out = new LinkedHashMap<>();
        out.put("flink", EnvironmentInformation.getVersion());
        out.put("recorded_by", "sandbox/testdata/sqlgen (PaymentsPlan)");
        out.put("statements", List.of(PAYMENTS, SINK, INSERT));
        out.put("vertices", vertices);
        out.put("operators", operators);
        out.put("plan", mapper.readTree(mapper.writeValueAsString(info)));
        Files.writeString(Path.of(args[0]),
                mapper.writerWithDefaultPrettyPrinter().writeValueAsString(out) + "\n", StandardCharsets.UTF_8);
    }
}
