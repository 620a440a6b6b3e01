package skewscope.e2e;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;

/**
 * A single-node Apache Kafka broker in KRaft mode (one process is broker and
 * controller) on 127.0.0.1 with free ports, for skewscope's end-to-end tests.
 *
 * <p>Usage: {@code java -cp ... skewscope.e2e.KafkaBroker <workDir>}. It
 * formats a fresh log directory under workDir with a random cluster id,
 * starts the server, waits until the client listener accepts connections and
 * prints, each on its own stdout line:
 *
 * <pre>
 * KAFKA_CLUSTER_ID=&lt;id&gt;
 * KAFKA_BOOTSTRAP=127.0.0.1:&lt;port&gt;
 * READY
 * </pre>
 *
 * It then runs until standard input is closed or reads the line "quit",
 * shuts the server down cleanly and prints "STOPPED". Logs go where the
 * log4j2 configuration says (by default ${sys:log.file}).
 */
public final class KafkaBroker {
    private KafkaBroker() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: KafkaBroker <workDir>");
            System.exit(2);
        }
        Path work = Path.of(args[0]).toAbsolutePath();
        Path logDir = work.resolve("kraft-logs");
        Files.createDirectories(logDir);

        int brokerPort = freePort();
        int controllerPort = freePort();
        String clusterId = Uuid.randomUuid().toString();

        Properties props = new Properties();
        props.setProperty("process.roles", "broker,controller");
        props.setProperty("node.id", "1");
        props.setProperty("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
        props.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
        props.setProperty("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
        props.setProperty("controller.listener.names", "CONTROLLER");
        props.setProperty("inter.broker.listener.name", "PLAINTEXT");
        props.setProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        props.setProperty("log.dirs", logDir.toString());
        props.setProperty("num.partitions", "1");
        props.setProperty("default.replication.factor", "1");
        props.setProperty("offsets.topic.replication.factor", "1");
        props.setProperty("offsets.topic.num.partitions", "4");
        props.setProperty("transaction.state.log.replication.factor", "1");
        props.setProperty("transaction.state.log.min.isr", "1");
        props.setProperty("share.coordinator.state.topic.replication.factor", "1");
        props.setProperty("share.coordinator.state.topic.min.isr", "1");
        props.setProperty("group.initial.rebalance.delay.ms", "0");
        props.setProperty("auto.create.topics.enable", "false");
        props.setProperty("log.flush.interval.messages", "1000000");
        props.setProperty("log.segment.bytes", String.valueOf(16 * 1024 * 1024));

        Path propsFile = work.resolve("server.properties");
        try (OutputStream out = new FileOutputStream(propsFile.toFile())) {
            props.store(out, "skewscope e2e broker");
        }

        // kafka-storage.sh format -t <id> -c server.properties, without System.exit.
        ByteArrayOutputStream formatOut = new ByteArrayOutputStream();
        int rc = StorageTool.execute(
                new String[] {"format", "-t", clusterId, "-c", propsFile.toString()},
                new PrintStream(formatOut, true, StandardCharsets.UTF_8));
        if (rc != 0) {
            System.err.println("kafka storage format failed (" + rc + "): " + formatOut.toString(StandardCharsets.UTF_8));
            System.exit(1);
        }

        KafkaRaftServer server = new KafkaRaftServer(KafkaConfig.fromProps(props, false), Time.SYSTEM);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.shutdown();
                server.awaitShutdown();
            } catch (Throwable ignored) {
                // best effort on a signal
            }
        }, "kafka-shutdown-hook"));
        server.startup();
        waitForPort(brokerPort, 60_000);

        System.out.println("KAFKA_CLUSTER_ID=" + clusterId);
        System.out.println("KAFKA_BOOTSTRAP=127.0.0.1:" + brokerPort);
        System.out.println("READY");
        System.out.flush();

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.trim().equals("quit")) {
                break;
            }
        }
        server.shutdown();
        server.awaitShutdown();
        System.out.println("STOPPED");
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }

    static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            return s.getLocalPort();
        }
    }

    static void waitForPort(int port, long timeoutMs) throws Exception {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 500);
                return;
            } catch (Exception e) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("broker port " + port + " not open after " + timeoutMs + " ms", e);
                }
                Thread.sleep(100);
            }
        }
    }
}
