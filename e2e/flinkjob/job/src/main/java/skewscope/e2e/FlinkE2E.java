package skewscope.e2e;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.util.EnvironmentInformation;

/**
 * A Flink MiniCluster with the REST endpoint (and the Web UI handlers of
 * flink-runtime-web) on 127.0.0.1, driven over standard input by skewscope's
 * Go end-to-end tests.
 *
 * <p>Usage: {@code java -cp ... skewscope.e2e.FlinkE2E <workDir> <kafkaBootstrap> [slots] [scheduler]}.
 * The scheduler is "default" (Flink's default scheduler) or "adaptive" (jobmanager.scheduler:
 * adaptive, with short resource stabilization timeouts and no cooldown between rescales, so a
 * PUT /jobs/:jobid/resource-requirements rescales the job in place within a checkpoint or two).
 *
 * <p>On start it prints, one per stdout line:
 *
 * <pre>
 * FLINK_VERSION=&lt;version&gt;
 * REST_URL=http://127.0.0.1:&lt;port&gt;
 * SCHEDULER=default|adaptive
 * READY
 * </pre>
 *
 * <p>Then it reads commands, one per stdin line, and answers each with exactly
 * one stdout line, "OK ..." or "ERR &lt;message&gt;". Arguments are
 * {@code key=value} words; values are URL-query-decoded (so a path with a
 * space is sent as %20).
 *
 * <ul>
 *   <li>{@code submit name=N topics=T1,T2 out=TOPIC group=G sourceP=N keyedP=N [maxP=N]
 *       [savepoint=PATH] [checkpointMs=N] [watermarks=none|bounded] [boundMs=N] [idleMs=N]
 *       [alignGroup=G alignDriftMs=N [alignUpdateMs=N]]} builds the job of {@link SkewJob} and
 *       submits it to the MiniCluster; answers {@code OK jobId=<32 hex>}. Its fail-once markers
 *       ({@link SkewJob.SourceTagger}) live in workDir/markers. watermarks=bounded gives the source
 *       {@code forBoundedOutOfOrderness(boundMs)} on the Kafka record timestamp, with
 *       {@code withIdleness(idleMs)} when idleMs is above 0 and
 *       {@code withWatermarkAlignment(alignGroup, alignDriftMs, alignUpdateMs)} when alignGroup
 *       is given (alignUpdateMs defaults to 1000); the default, none, has no watermarks.
 *   <li>{@code submitSql name=N p=N [maxP=N] s0=STATEMENT s1=STATEMENT ...} plans the Flink SQL
 *       statements s0, s1, ... (CREATE TABLE ..., then INSERT INTO ...) with {@link SqlJob}, every
 *       operator at parallelism p, and submits the job to the MiniCluster; answers
 *       {@code OK jobId=<32 hex>}.
 *   <li>{@code cancel jobId=ID} cancels a job; answers {@code OK}.
 *   <li>{@code ping} answers {@code OK}.
 *   <li>{@code quit}, or the end of standard input, closes the cluster, prints
 *       {@code BYE} and exits.
 * </ul>
 *
 * Stopping with a savepoint is done by the caller through REST
 * ({@code POST /jobs/:jobid/stop}), as an operator would.
 */
public final class FlinkE2E {
    private FlinkE2E() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: FlinkE2E <workDir> <kafkaBootstrap> [slots] [default|adaptive]");
            System.exit(2);
        }
        Path work = Path.of(args[0]).toAbsolutePath();
        String bootstrap = args[1];
        int slots = args.length > 2 ? Integer.parseInt(args[2]) : 16;
        String scheduler = args.length > 3 ? args[3] : "default";
        if (!scheduler.equals("default") && !scheduler.equals("adaptive")) {
            System.err.println("scheduler must be default or adaptive, not " + scheduler);
            System.exit(2);
        }
        Files.createDirectories(work.resolve("tmp"));
        Files.createDirectories(work.resolve("markers"));
        Files.createDirectories(work.resolve("savepoints"));
        Files.createDirectories(work.resolve("web"));

        // Raw keys through Configuration.fromMap: the typed ConfigOptions of
        // these settings moved or changed type between 1.20 and 2.x.
        Map<String, String> c = new HashMap<>();
        c.put("rest.address", "127.0.0.1");
        c.put("rest.bind-address", "127.0.0.1");
        c.put("rest.bind-port", "0");
        c.put("jobmanager.rpc.address", "127.0.0.1");
        c.put("taskmanager.host", "127.0.0.1");
        c.put("metrics.fetcher.update-interval", "1000");
        c.put("web.refresh-interval", "1000");
        c.put("web.tmpdir", work.resolve("web").toString());
        c.put("io.tmp.dirs", work.resolve("tmp").toString());
        c.put("state.savepoints.dir", work.resolve("savepoints").toUri().toString());
        c.put("execution.checkpointing.savepoint-dir", work.resolve("savepoints").toUri().toString());
        c.put("taskmanager.numberOfTaskSlots", String.valueOf(slots));
        c.put("taskmanager.memory.network.min", "256m");
        c.put("taskmanager.memory.network.max", "256m");
        c.put("taskmanager.memory.managed.size", "64m");
        c.put("parallelism.default", "1");
        if (scheduler.equals("adaptive")) {
            c.put("jobmanager.scheduler", "adaptive");
            // 1.20 names, which 2.x still reads as fallbacks, then the 2.x names.
            c.put("jobmanager.adaptive-scheduler.resource-stabilization-timeout", "1 s");
            c.put("jobmanager.adaptive-scheduler.resource-wait-timeout", "60 s");
            c.put("jobmanager.adaptive-scheduler.scaling-interval.min", "0 ms");
            c.put("jobmanager.adaptive-scheduler.submission.resource-stabilization-timeout", "1 s");
            c.put("jobmanager.adaptive-scheduler.submission.resource-wait-timeout", "60 s");
            c.put("jobmanager.adaptive-scheduler.executing.resource-stabilization-timeout", "1 s");
            c.put("jobmanager.adaptive-scheduler.executing.cooldown-after-rescaling", "0 ms");
        }
        Configuration conf = Configuration.fromMap(c);

        MiniClusterConfiguration mcc = new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(slots)
                .build();
        MiniCluster cluster = new MiniCluster(mcc);
        cluster.start();
        URI rest = cluster.getRestAddress().get(60, TimeUnit.SECONDS);

        PrintStream out = System.out;
        out.println("FLINK_VERSION=" + EnvironmentInformation.getVersion());
        out.println("REST_URL=http://127.0.0.1:" + rest.getPort());
        out.println("SCHEDULER=" + scheduler);
        out.println("READY");
        out.flush();

        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                cluster.closeAsync().get(30, TimeUnit.SECONDS);
            } catch (Throwable ignored) {
                // best effort on a signal
            }
        }, "minicluster-shutdown-hook"));

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            line = line.trim();
            if (line.isEmpty()) {
                continue;
            }
            if (line.equals("quit")) {
                break;
            }
            String reply;
            try {
                reply = handle(cluster, bootstrap, work.resolve("markers").toString(), line);
            } catch (Throwable t) {
                Throwable root = t;
                while (root.getCause() != null && root.getCause() != root) {
                    root = root.getCause();
                }
                System.err.println("command failed: " + line);
                t.printStackTrace();
                reply = "ERR " + (t + (root != t ? " (root: " + root + ")" : "")).replace('\n', ' ');
            }
            out.println(reply);
            out.flush();
        }
        try {
            cluster.closeAsync().get(60, TimeUnit.SECONDS);
        } finally {
            out.println("BYE");
            out.flush();
            Runtime.getRuntime().halt(0);
        }
    }

    static String handle(MiniCluster cluster, String bootstrap, String markerDir, String line) throws Exception {
        String[] words = line.split("\\s+");
        Map<String, String> a = new LinkedHashMap<>();
        for (int i = 1; i < words.length; i++) {
            int eq = words[i].indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("want key=value, got " + words[i]);
            }
            a.put(words[i].substring(0, eq), URLDecoder.decode(words[i].substring(eq + 1), StandardCharsets.UTF_8));
        }
        switch (words[0]) {
            case "ping":
                return "OK";
            case "submit": {
                SkewJob.Spec s = new SkewJob.Spec();
                s.name = req(a, "name");
                s.bootstrap = bootstrap;
                s.topics = java.util.Arrays.asList(req(a, "topics").split(","));
                s.outTopic = req(a, "out");
                s.groupId = req(a, "group");
                s.sourceParallelism = Integer.parseInt(req(a, "sourceP"));
                s.keyedParallelism = Integer.parseInt(req(a, "keyedP"));
                s.maxParallelism = a.containsKey("maxP") && !a.get("maxP").equals("-") ? Integer.parseInt(a.get("maxP")) : -1;
                s.savepoint = a.containsKey("savepoint") && !a.get("savepoint").equals("-") ? a.get("savepoint") : null;
                s.checkpointMs = a.containsKey("checkpointMs") ? Long.parseLong(a.get("checkpointMs")) : 2000L;
                s.markerDir = markerDir;
                s.watermarks = a.getOrDefault("watermarks", "none");
                s.boundMs = a.containsKey("boundMs") ? Long.parseLong(a.get("boundMs")) : 0L;
                s.idleMs = a.containsKey("idleMs") ? Long.parseLong(a.get("idleMs")) : 0L;
                if (a.containsKey("alignGroup")) {
                    s.alignGroup = a.get("alignGroup");
                    s.alignDriftMs = Long.parseLong(req(a, "alignDriftMs"));
                    s.alignUpdateMs = a.containsKey("alignUpdateMs") ? Long.parseLong(a.get("alignUpdateMs")) : 1000L;
                }
                JobGraph graph = SkewJob.jobGraph(s);
                JobID id = cluster.submitJob(graph).get(60, TimeUnit.SECONDS).getJobID();
                return "OK jobId=" + id;
            }
            case "submitSql": {
                List<String> statements = new ArrayList<>();
                for (int i = 0; a.containsKey("s" + i); i++) {
                    statements.add(a.get("s" + i));
                }
                int maxP = a.containsKey("maxP") && !a.get("maxP").equals("-") ? Integer.parseInt(a.get("maxP")) : -1;
                JobGraph graph = SqlJob.jobGraph(req(a, "name"), Integer.parseInt(req(a, "p")), maxP, statements);
                JobID id = cluster.submitJob(graph).get(60, TimeUnit.SECONDS).getJobID();
                return "OK jobId=" + id;
            }
            case "cancel":
                cluster.cancelJob(JobID.fromHexString(req(a, "jobId"))).get(60, TimeUnit.SECONDS);
                return "OK";
            default:
                throw new IllegalArgumentException("unknown command " + words[0]);
        }
    }

    static String req(Map<String, String> a, String k) {
        String v = a.get(k);
        if (v == null || v.isEmpty()) {
            throw new IllegalArgumentException("missing " + k + "=");
        }
        return v;
    }
}
