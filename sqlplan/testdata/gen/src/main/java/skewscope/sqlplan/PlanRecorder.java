package skewscope.sqlplan;

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
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.runtime.jobgraph.jsonplan.JsonPlanGenerator;
import org.apache.flink.runtime.rest.messages.JobPlanInfo;
import org.apache.flink.runtime.rest.util.RestMapperUtils;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamStatementSet;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.planner.plan.nodes.exec.ExecNodeContext;

/**
 * Records the job plan of each SQL shape below as GET /jobs/:id/plan returns it, without a cluster:
 * the shape's INSERT INTO is attached to a StreamExecutionEnvironment (StreamStatementSet
 * .attachAsDataStream), its StreamGraph turned into the JobGraph the client would submit, and the
 * JobGraph written by Flink's own JsonPlanGenerator.generatePlan, wrapped in the REST handler's
 * JobPlanInfo and serialised by the REST ObjectMapper. A manifest.json names the Flink version and
 * each shape's SQL and options.
 *
 * <p>Usage: PlanRecorder OUT_ROOT; the plans go to OUT_ROOT/&lt;Flink version&gt;/. The same source compiles against every Flink line; the two calls
 * whose types changed in 2.0 (generatePlan returns a String in 1.20 and a JobPlanInfo.Plan in 2.x)
 * go through reflection.
 */
public final class PlanRecorder {

    static final int PARALLELISM = 4;

    /** clicks: an append-only stream with a processing-time and an event-time attribute. */
    static final String CLICKS =
            "CREATE TABLE clicks (\n"
                    + "  user_id STRING,\n"
                    + "  region_id BIGINT,\n"
                    + "  item STRING,\n"
                    + "  amount DOUBLE,\n"
                    + "  ts TIMESTAMP(3),\n"
                    + "  pt AS PROCTIME(),\n"
                    + "  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND\n"
                    + ") WITH ('connector' = 'datagen')";

    /** users: the other side of the joins. */
    static final String USERS =
            "CREATE TABLE users (\n"
                    + "  user_id STRING,\n"
                    + "  name STRING,\n"
                    + "  region_id BIGINT,\n"
                    + "  ts TIMESTAMP(3),\n"
                    + "  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND\n"
                    + ") WITH ('connector' = 'datagen')";

    record Shape(String name, String what, Map<String, String> options, List<String> ddl, String insert) {}

    static String sink(String columns) {
        return "CREATE TABLE sink (" + columns + ") WITH ('connector' = 'blackhole')";
    }

    static Map<String, String> options(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    static final Map<String, String> MINI_BATCH =
            options(
                    "table.exec.mini-batch.enabled", "true",
                    "table.exec.mini-batch.allow-latency", "1s",
                    "table.exec.mini-batch.size", "1000",
                    "table.optimizer.agg-phase-strategy", "TWO_PHASE");

    static List<Shape> shapes() {
        List<Shape> s = new ArrayList<>();
        s.add(new Shape(
                "group_string",
                "GROUP BY one STRING column",
                options(),
                List.of(CLICKS, sink("user_id STRING, n BIGINT, total DOUBLE")),
                "INSERT INTO sink SELECT user_id, COUNT(*), SUM(amount) FROM clicks GROUP BY user_id"));
        s.add(new Shape(
                "group_bigint_string",
                "GROUP BY (BIGINT, STRING)",
                options(),
                List.of(CLICKS, sink("region_id BIGINT, user_id STRING, n BIGINT")),
                "INSERT INTO sink SELECT region_id, user_id, COUNT(*) FROM clicks GROUP BY region_id, user_id"));
        s.add(new Shape(
                "join_inner",
                "a regular inner join on one key",
                options(),
                List.of(CLICKS, USERS, sink("user_id STRING, amount DOUBLE, name STRING")),
                "INSERT INTO sink SELECT c.user_id, c.amount, u.name FROM clicks c JOIN users u ON c.user_id = u.user_id"));
        s.add(new Shape(
                "join_two_keys",
                "a regular inner join on two keys, written right side first",
                options(),
                List.of(CLICKS, USERS, sink("user_id STRING, amount DOUBLE, name STRING")),
                "INSERT INTO sink SELECT c.user_id, c.amount, u.name FROM clicks c JOIN users u"
                        + " ON u.region_id = c.region_id AND c.user_id = u.user_id"));
        s.add(new Shape(
                "join_expr_keys",
                "a join whose keys are expressions",
                options(),
                List.of(CLICKS, USERS, sink("user_id STRING, amount DOUBLE, name STRING")),
                "INSERT INTO sink SELECT c.user_id, c.amount, u.name FROM clicks c JOIN users u"
                        + " ON LOWER(c.user_id) = UPPER(u.name) AND c.region_id + 1 = u.region_id"));
        s.add(new Shape(
                "minibatch_two_phase",
                "mini-batch two-phase aggregate: LocalGroupAggregate then GlobalGroupAggregate",
                MINI_BATCH,
                List.of(CLICKS, sink("user_id STRING, n BIGINT, total DOUBLE")),
                "INSERT INTO sink SELECT user_id, COUNT(*), SUM(amount) FROM clicks GROUP BY user_id"));
        Map<String, String> split = new LinkedHashMap<>(MINI_BATCH);
        split.put("table.optimizer.distinct-agg.split.enabled", "true");
        s.add(new Shape(
                "split_distinct",
                "split distinct aggregate over mini-batch two-phase: IncrementalGroupAggregate",
                split,
                List.of(CLICKS, sink("user_id STRING, items BIGINT")),
                "INSERT INTO sink SELECT user_id, COUNT(DISTINCT item) FROM clicks GROUP BY user_id"));
        s.add(new Shape(
                "split_distinct_one_phase",
                "split distinct aggregate without mini-batch: two GroupAggregates",
                options("table.optimizer.distinct-agg.split.enabled", "true"),
                List.of(CLICKS, sink("user_id STRING, items BIGINT")),
                "INSERT INTO sink SELECT user_id, COUNT(DISTINCT item) FROM clicks GROUP BY user_id"));
        s.add(new Shape(
                "dedup",
                "deduplication: ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY pt) = 1",
                options(),
                List.of(CLICKS, sink("user_id STRING, item STRING, amount DOUBLE")),
                "INSERT INTO sink SELECT user_id, item, amount FROM ("
                        + "SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY pt) AS rn FROM clicks"
                        + ") WHERE rn = 1"));
        s.add(new Shape(
                "topn",
                "Top-N: ROW_NUMBER() OVER (PARTITION BY region_id ORDER BY amount DESC) <= 3",
                options(),
                List.of(CLICKS, sink("region_id BIGINT, user_id STRING, amount DOUBLE")),
                "INSERT INTO sink SELECT region_id, user_id, amount FROM ("
                        + "SELECT *, ROW_NUMBER() OVER (PARTITION BY region_id ORDER BY amount DESC) AS rn FROM clicks"
                        + ") WHERE rn <= 3"));
        s.add(new Shape(
                "over_range",
                "OVER aggregate: PARTITION BY user_id ORDER BY pt RANGE INTERVAL '1' MINUTE PRECEDING",
                options(),
                List.of(CLICKS, sink("user_id STRING, amount DOUBLE, last_minute DOUBLE")),
                "INSERT INTO sink SELECT user_id, amount, SUM(amount) OVER ("
                        + "PARTITION BY user_id ORDER BY pt"
                        + " RANGE BETWEEN INTERVAL '1' MINUTE PRECEDING AND CURRENT ROW) FROM clicks"));
        String tumble =
                "INSERT INTO sink SELECT window_start, window_end, user_id, COUNT(*) FROM TABLE("
                        + "TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))"
                        + " GROUP BY window_start, window_end, user_id";
        String tumbleSink = "window_start TIMESTAMP(3), window_end TIMESTAMP(3), user_id STRING, n BIGINT";
        s.add(new Shape(
                "window_tvf",
                "window TVF aggregate: TUMBLE on the rowtime ts, GROUP BY window_start, window_end, user_id",
                options(),
                List.of(CLICKS, sink(tumbleSink)),
                tumble));
        s.add(new Shape(
                "window_tvf_one_phase",
                "the same window TVF aggregate with table.optimizer.agg-phase-strategy=ONE_PHASE",
                options("table.optimizer.agg-phase-strategy", "ONE_PHASE"),
                List.of(CLICKS, sink(tumbleSink)),
                tumble));
        s.add(new Shape(
                "global_agg",
                "GROUP BY with no key: a global aggregate",
                options(),
                List.of(CLICKS, sink("n BIGINT, total DOUBLE")),
                "INSERT INTO sink SELECT COUNT(*), SUM(amount) FROM clicks"));
        s.add(new Shape(
                "interval_join",
                "an interval join on user_id with a rowtime bound",
                options(),
                List.of(CLICKS, USERS, sink("user_id STRING, amount DOUBLE, name STRING")),
                "INSERT INTO sink SELECT c.user_id, c.amount, u.name FROM clicks c, users u"
                        + " WHERE c.user_id = u.user_id"
                        + " AND c.ts BETWEEN u.ts - INTERVAL '1' MINUTE AND u.ts"));
        s.add(new Shape(
                "join_no_equality",
                "a regular join whose condition has no equality",
                options(),
                List.of(CLICKS, USERS, sink("user_id STRING, amount DOUBLE, name STRING")),
                "INSERT INTO sink SELECT c.user_id, c.amount, u.name FROM clicks c JOIN users u"
                        + " ON c.region_id > u.region_id"));
        s.add(new Shape(
                "topn_global",
                "Top-N without PARTITION BY: ROW_NUMBER() OVER (ORDER BY amount DESC) <= 3",
                options(),
                List.of(CLICKS, sink("user_id STRING, amount DOUBLE")),
                "INSERT INTO sink SELECT user_id, amount FROM ("
                        + "SELECT *, ROW_NUMBER() OVER (ORDER BY amount DESC) AS rn FROM clicks"
                        + ") WHERE rn <= 3"));
        s.add(new Shape(
                "window_join",
                "a window join of two TUMBLE windows on user_id",
                options(),
                List.of(CLICKS, USERS, sink("user_id STRING, amount DOUBLE, name STRING")),
                "INSERT INTO sink SELECT l.user_id, l.amount, r.name FROM"
                        + " (SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) l"
                        + " JOIN (SELECT * FROM TABLE(TUMBLE(TABLE users, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) r"
                        + " ON l.user_id = r.user_id AND l.window_start = r.window_start"
                        + " AND l.window_end = r.window_end"));
        s.add(new Shape(
                "group_quoted",
                "GROUP BY columns whose names need backquotes (a space, a reserved word)",
                options(),
                List.of(
                        "CREATE TABLE quoted (`user name` STRING, `order` BIGINT, `v` DOUBLE)"
                                + " WITH ('connector' = 'datagen')",
                        sink("`user name` STRING, `order` BIGINT, total DOUBLE")),
                "INSERT INTO sink SELECT `user name`, `order`, SUM(`v`) FROM quoted GROUP BY `user name`, `order`"));
        s.add(new Shape(
                "group_expr",
                "GROUP BY an expression (LOWER(user_id))",
                options(),
                List.of(CLICKS, sink("k STRING, n BIGINT")),
                "INSERT INTO sink SELECT LOWER(user_id), COUNT(*) FROM clicks GROUP BY LOWER(user_id)"));
        s.add(new Shape(
                "group_cascading",
                "GROUP BY one STRING column, vertex descriptions in CASCADING mode",
                options("pipeline.vertex-description-mode", "CASCADING"),
                List.of(CLICKS, sink("user_id STRING, n BIGINT, total DOUBLE")),
                "INSERT INTO sink SELECT user_id, COUNT(*), SUM(amount) FROM clicks GROUP BY user_id"));
        s.add(new Shape(
                "group_renamed",
                "GROUP BY a column renamed in a subquery (user_id AS uid)",
                options(),
                List.of(CLICKS, sink("uid STRING, n BIGINT")),
                "INSERT INTO sink SELECT uid, COUNT(*) FROM (SELECT user_id AS uid FROM clicks) GROUP BY uid"));
        s.add(new Shape(
                "group_computed_alias",
                "GROUP BY an alias a subquery computes (LOWER(user_id) AS k)",
                options(),
                List.of(CLICKS, sink("k STRING, n BIGINT")),
                "INSERT INTO sink SELECT k, COUNT(*) FROM (SELECT LOWER(user_id) AS k FROM clicks) GROUP BY k"));
        s.add(new Shape(
                "join_renamed_keys",
                "a regular join on differently named columns (c.user_id = u.name)",
                options(),
                List.of(CLICKS, USERS, sink("user_id STRING, amount DOUBLE, name STRING")),
                "INSERT INTO sink SELECT c.user_id, c.amount, u.name FROM clicks c JOIN users u ON c.user_id = u.name"));
        return s;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: PlanRecorder OUT_ROOT   (writes OUT_ROOT/<Flink version>/)");
            System.exit(2);
        }
        Path out = Path.of(args[0]).resolve(EnvironmentInformation.getVersion());
        Files.createDirectories(out);
        ObjectMapper mapper = RestMapperUtils.getStrictObjectMapper();

        Map<String, Object> manifest = new LinkedHashMap<>();
        manifest.put("flink", EnvironmentInformation.getVersion());
        manifest.put("jars", List.of(
                jar(JobGraph.class),
                jar(StreamExecutionEnvironment.class),
                jar(StreamTableEnvironment.class),
                jar(Class.forName("org.apache.flink.table.planner.delegation.PlannerBase")),
                jar(Class.forName("org.apache.flink.table.runtime.keyselector.BinaryRowDataKeySelector"))));
        manifest.put("java", System.getProperty("java.version"));
        manifest.put("parallelism", PARALLELISM);
        manifest.put("recorded_by", "sqlplan/testdata/gen (make sqlplans)");
        List<Object> recorded = new ArrayList<>();
        long n = 0;
        for (Shape s : shapes()) {
            n++;
            // Node ids as in a JVM that plans one query: [1]:TableSourceScan ...
            ExecNodeContext.resetIdCounter();
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setParallelism(PARALLELISM);
            // pipeline.* options shape the JobGraph: the environment's.
            Map<String, String> pipeline = new LinkedHashMap<>();
            pipeline.put("pipeline.name", s.name());
            s.options().forEach((k, v) -> {
                if (k.startsWith("pipeline.")) {
                    pipeline.put(k, v);
                }
            });
            env.configure(Configuration.fromMap(pipeline), PlanRecorder.class.getClassLoader());
            StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
            s.options().forEach((k, v) -> {
                if (!k.startsWith("pipeline.")) {
                    tEnv.getConfig().set(k, v);
                }
            });
            for (String ddl : s.ddl()) {
                tEnv.executeSql(ddl);
            }
            StreamStatementSet set = tEnv.createStatementSet();
            set.addInsertSql(s.insert());
            set.attachAsDataStream();
            // A fixed job id, so that a rerun writes the same bytes.
            JobID jobId = new JobID(0x5c3e5c09eL, n);
            JobGraph jobGraph =
                    env.getStreamGraph().getJobGraph(PlanRecorder.class.getClassLoader(), jobId);
            Object plan =
                    JsonPlanGenerator.class.getMethod("generatePlan", JobGraph.class).invoke(null, jobGraph);
            Constructor<JobPlanInfo> c = JobPlanInfo.class.getConstructor(plan.getClass());
            JobPlanInfo info = c.newInstance(plan);
            // Pretty-printed so that a diff between lines reads; the REST
            // answer is the same JSON on one line.
            String json = mapper.writerWithDefaultPrettyPrinter().writeValueAsString(
                    mapper.readTree(mapper.writeValueAsString(info)));
            Files.writeString(out.resolve(s.name() + ".json"), json + "\n", StandardCharsets.UTF_8);

            Map<String, Object> m = new LinkedHashMap<>();
            m.put("shape", s.name());
            m.put("file", s.name() + ".json");
            m.put("what", s.what());
            m.put("options", s.options());
            m.put("ddl", s.ddl());
            m.put("sql", s.insert());
            recorded.add(m);
            System.out.println(out.resolve(s.name() + ".json"));
        }
        manifest.put("shapes", recorded);
        Files.writeString(
                out.resolve("manifest.json"),
                mapper.writerWithDefaultPrettyPrinter().writeValueAsString(manifest) + "\n",
                StandardCharsets.UTF_8);
    }

    /** The file name of the jar a class was loaded from (its artifact and version). */
    static String jar(Class<?> c) {
        String path = c.getProtectionDomain().getCodeSource().getLocation().getPath();
        return path.substring(path.lastIndexOf('/') + 1);
    }
}
