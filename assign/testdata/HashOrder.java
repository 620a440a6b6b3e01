// HashOrder replays KafkaSource split placement with the real
// java.util.HashMap and java.util.HashSet, for TestRestoreMatchesJDK.
//
// Run: java assign/testdata/HashOrder.java < scenarios   (Java 17+, single-file
// source launch; no dependencies).
//
// It mirrors, for each scenario:
//   - the fresh start: KafkaSourceEnumerator (flink-connector-kafka 5.0.0
//     L441-466: sort by (topic, partition), then one new HashSet<>() per owner;
//     3.4.0/4.0.1: TopicListSubscriber's new HashSet<TopicPartition>() of all
//     partitions, filled in ascending order here (the AdminClient's order in
//     Flink), minus the partitions already assigned (getPartitionChange), is
//     iterated into new HashSet<>(newPartitions.size()) (L304), then into the
//     per-owner HashSets (L339-352)),
//     getSplitOwner (3.4.0 L468-475, 5.0.0 L599-606), and the list each reader
//     gets: new ArrayList<>(pending set) (assignPendingPartitionSplits);
//   - the reader: SourceReaderBase.addSplits puts split ids into a
//     new HashMap<>() and snapshotState lists it in forEach order;
//   - each restore: RoundRobinOperatorStateRepartitioner (identity at equal
//     parallelism, else contiguous chunks of the old lists concatenated in
//     old-subtask order; pieces are kept in old-subtask order here);
//   - "discovered" partitions after the last restore: one more discovery
//     batch at the last parallelism with EARLIEST_OFFSET, put after the
//     restored splits.
//
// Input, one scenario per block (tokens separated by spaces):
//   scenario <name>
//   connector 5|3-4
//   start <sentinel start offset, e.g. -2 or -3>
//   topics <k> <name> <partitions> ...
//   history <h> <n0> <n1> ...
//   discovered <k> <name> <partitions after> ...
//   end
// Output per scenario: "scenario <name>", then per step s and subtask j the
// lines "<s> <j> add <ids>" (the reader's addSplits order) and
// "<s> <j> snap <ids>" (its snapshotState order), ids as "<topic index>:<partition>"
// with topic indexes counted over topics then new topics, then "done".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

public class HashOrder {
    // org.apache.kafka.common.TopicPartition (kafka-clients 3.9.0 L46-53, L69-70).
    static final class TP {
        final String topic;
        final int partition;
        final int topicIndex;

        TP(String topic, int partition, int topicIndex) {
            this.topic = topic;
            this.partition = partition;
            this.topicIndex = topicIndex;
        }

        @Override
        public int hashCode() {
            final int prime = 31;
            int result = 1;
            result = prime * result + partition;
            result = prime * result + Objects.hashCode(topic);
            return result;
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof TP)) return false;
            TP t = (TP) o;
            return partition == t.partition && topic.equals(t.topic);
        }

        @Override
        public String toString() {
            return topic + "-" + partition;
        }

        String label() {
            return topicIndex + ":" + partition;
        }
    }

    // KafkaPartitionSplit: hashCode = Objects.hash(tp, startingOffset, stoppingOffset).
    static final class Split {
        static final long NO_STOPPING_OFFSET = Long.MIN_VALUE;
        final TP tp;
        final long start;
        final long stop;

        Split(TP tp, long start) {
            this.tp = tp;
            this.start = start;
            this.stop = NO_STOPPING_OFFSET;
        }

        String splitId() {
            return tp.toString();
        }

        @Override
        public int hashCode() {
            return Objects.hash(tp, start, stop);
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof Split)) return false;
            Split s = (Split) o;
            return tp.equals(s.tp) && start == s.start && stop == s.stop;
        }
    }

    static int getSplitOwner(TP tp, int numReaders) {
        int startIndex = ((tp.topic.hashCode() * 31) & 0x7FFFFFFF) % numReaders;
        return (startIndex + tp.partition) % numReaders;
    }

    // One discovery batch: the list each reader receives. universe is every
    // partition the subscriber sees; splits are the new ones.
    static List<List<Split>> batch(List<Split> splits, List<TP> universe, int n, String connector) {
        List<Split> sorted = new ArrayList<>(splits);
        sorted.sort(Comparator.comparing((Split s) -> s.tp.topic).thenComparingInt(s -> s.tp.partition));
        Iterable<Split> source = sorted;
        if (connector.equals("3-4")) {
            List<TP> ascending = new ArrayList<>(universe);
            ascending.sort(Comparator.comparing((TP t) -> t.topic).thenComparingInt(t -> t.partition));
            Set<TP> fetchedPartitions = new HashSet<>();
            for (TP tp : ascending) fetchedPartitions.add(tp);
            Map<TP, Split> byTP = new HashMap<>();
            for (Split s : splits) byTP.put(s.tp, s);
            for (TP tp : ascending) {
                if (!byTP.containsKey(tp)) fetchedPartitions.remove(tp); // already assigned
            }
            Set<Split> partitionSplits = new HashSet<>(fetchedPartitions.size());
            for (TP tp : fetchedPartitions) partitionSplits.add(byTP.get(tp));
            source = partitionSplits;
        }
        Map<Integer, Set<Split>> pending = new HashMap<>();
        for (Split s : source) {
            pending.computeIfAbsent(getSplitOwner(s.tp, n), r -> new HashSet<>()).add(s);
        }
        List<List<Split>> out = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            Set<Split> set = pending.get(r);
            out.add(set == null ? new ArrayList<>() : new ArrayList<>(set));
        }
        return out;
    }

    static String ids(List<Split> splits) {
        StringBuilder b = new StringBuilder();
        for (Split s : splits) {
            b.append(' ').append(s.tp.label());
        }
        return b.toString();
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        PrintWriter out = new PrintWriter(System.out);
        String name = null, connector = "5";
        long start = -2;
        List<String> topicNames = new ArrayList<>();
        List<Integer> topicCounts = new ArrayList<>();
        List<String> newNames = new ArrayList<>();
        List<Integer> newCounts = new ArrayList<>();
        int[] history = new int[0];
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.trim().split(" +");
            switch (f[0]) {
                case "scenario":
                    name = f[1];
                    connector = "5";
                    start = -2;
                    topicNames.clear();
                    topicCounts.clear();
                    newNames.clear();
                    newCounts.clear();
                    history = new int[0];
                    break;
                case "connector":
                    connector = f[1];
                    break;
                case "start":
                    start = Long.parseLong(f[1]);
                    break;
                case "topics":
                case "discovered": {
                    int k = Integer.parseInt(f[1]);
                    for (int i = 0; i < k; i++) {
                        (f[0].equals("topics") ? topicNames : newNames).add(f[2 + 2 * i]);
                        (f[0].equals("topics") ? topicCounts : newCounts).add(Integer.parseInt(f[3 + 2 * i]));
                    }
                    break;
                }
                case "history": {
                    int k = Integer.parseInt(f[1]);
                    history = new int[k];
                    for (int i = 0; i < k; i++) history[i] = Integer.parseInt(f[2 + i]);
                    break;
                }
                case "end":
                    run(out, name, connector, start, topicNames, topicCounts, newNames, newCounts, history);
                    break;
                default:
                    if (!f[0].isEmpty()) throw new IllegalArgumentException("bad line: " + line);
            }
        }
        out.flush();
    }

    static void run(PrintWriter out, String name, String connector, long start,
                    List<String> topicNames, List<Integer> topicCounts,
                    List<String> newNames, List<Integer> newCounts, int[] history) {
        out.println("scenario " + name);
        Map<String, Integer> have = new HashMap<>();
        List<Split> initial = new ArrayList<>();
        for (int t = 0; t < topicNames.size(); t++) {
            have.put(topicNames.get(t), topicCounts.get(t));
            for (int p = 0; p < topicCounts.get(t); p++) {
                initial.add(new Split(new TP(topicNames.get(t), p, t), start));
            }
        }
        List<TP> universe = new ArrayList<>();
        for (Split s : initial) universe.add(s.tp);
        List<Split> discovered = new ArrayList<>();
        for (int t = 0; t < newNames.size(); t++) {
            int from = have.getOrDefault(newNames.get(t), 0);
            for (int p = from; p < newCounts.get(t); p++) {
                discovered.add(new Split(new TP(newNames.get(t), p, topicNames.size() + t), -2));
            }
        }
        int last = history.length - 1;
        List<List<Split>> lists = batch(initial, universe, history[0], connector);
        for (int s = 0; ; s++) {
            int n = history[s];
            if (s == last && !discovered.isEmpty()) {
                List<TP> all = new ArrayList<>(universe);
                for (Split d : discovered) all.add(d.tp);
                List<List<Split>> more = batch(discovered, all, n, connector);
                for (int j = 0; j < n; j++) lists.get(j).addAll(more.get(j));
            }
            List<List<Split>> snaps = new ArrayList<>();
            for (int j = 0; j < n; j++) {
                Map<String, Split> splitStates = new HashMap<>();
                for (Split sp : lists.get(j)) splitStates.put(sp.splitId(), sp);
                List<Split> snap = new ArrayList<>();
                splitStates.forEach((id, sp) -> snap.add(sp));
                snaps.add(snap);
                out.println(s + " " + j + " add" + ids(lists.get(j)));
                out.println(s + " " + j + " snap" + ids(snap));
            }
            if (s == last) break;
            int q = history[s + 1];
            lists = new ArrayList<>();
            if (q == n) {
                for (List<Split> snap : snaps) lists.add(new ArrayList<>(snap));
                continue;
            }
            List<Split> all = new ArrayList<>();
            for (List<Split> snap : snaps) all.addAll(snap);
            int base = all.size() / q, rem = all.size() % q, pos = 0;
            for (int j = 0; j < q; j++) {
                int len = base + (j < rem ? 1 : 0);
                lists.add(new ArrayList<>(all.subList(pos, pos + len)));
                pos += len;
            }
        }
        out.println("done");
    }
}
