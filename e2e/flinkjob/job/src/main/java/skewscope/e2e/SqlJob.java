package skewscope.e2e;

import java.util.List;
import java.util.Locale;

import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.bridge.java.StreamStatementSet;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;

/**
 * A Flink SQL job, planned by the table planner of the line's jars and run in the MiniCluster
 * like {@link SkewJob}: the caller's statements, in order, through a {@link StreamTableEnvironment}
 * in streaming mode. A statement starting with INSERT goes into one statement set; every other
 * statement (CREATE TABLE, SET-like DDL) is executed at once. The statement set is attached to
 * the StreamExecutionEnvironment ({@link StreamStatementSet#attachAsDataStream()}), whose stream
 * graph becomes the job graph, so the job is submitted to the FlinkE2E cluster rather than to a
 * local environment of its own.
 *
 * <p>Every operator runs at the given parallelism (the environment's default parallelism and
 * table.exec.resource.default-parallelism); the max parallelism is Flink's default unless
 * maxParallelism is above 0. Mini-batch stays off (table.exec.mini-batch.enabled=false, Flink's
 * default, set explicitly), so a GROUP BY is a single-phase GroupAggregate whose hash exchange
 * hands it every input record, and a regular join's two inputs are hashed by their join keys.
 */
public final class SqlJob {
    private SqlJob() {}

    public static JobGraph jobGraph(String name, int parallelism, int maxParallelism, List<String> statements) {
        if (statements.isEmpty()) {
            throw new IllegalArgumentException("a SQL job needs at least one statement (s0=)");
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(parallelism);
        if (maxParallelism > 0) {
            env.setMaxParallelism(maxParallelism);
        }
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env, EnvironmentSettings.inStreamingMode());
        tEnv.getConfig().set("table.exec.resource.default-parallelism", String.valueOf(parallelism));
        tEnv.getConfig().set("table.exec.mini-batch.enabled", "false");
        tEnv.getConfig().set("pipeline.name", name);
        StreamStatementSet set = tEnv.createStatementSet();
        int inserts = 0;
        for (String s : statements) {
            if (s.stripLeading().toUpperCase(Locale.ROOT).startsWith("INSERT")) {
                set.addInsertSql(s);
                inserts++;
            } else {
                tEnv.executeSql(s);
            }
        }
        if (inserts == 0) {
            throw new IllegalArgumentException("a SQL job needs an INSERT statement");
        }
        set.attachAsDataStream();
        StreamGraph graph = env.getStreamGraph();
        graph.setJobName(name);
        return graph.getJobGraph();
    }
}
