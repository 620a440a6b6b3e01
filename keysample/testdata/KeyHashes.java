// KeyHashes computes, with the JDK itself, the hashCode a Flink keyBy hashes
// for keys read from Kafka bytes, for TestRoutingMatchesJDK.
//
// Run: java keysample/testdata/KeyHashes.java < cases   (Java 17+,
// single-file source launch; no dependencies).
//
// Input, one case per line:
//   s <hex>      a record key decoded as new String(bytes, UTF_8)
//                (Kafka's StringDeserializer, Flink's SimpleStringSchema)
//   i <decimal>  an Integer
//   l <decimal>  a Long
// Output, one line per case: the hashCode in decimal; for s, followed by the
// decoded string's UTF-16 code units, each as " " and four hex digits.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

public class KeyHashes {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintWriter out = new PrintWriter(System.out, false);
        String line;
        while ((line = in.readLine()) != null) {
            String arg = line.substring(2).trim();
            switch (line.charAt(0)) {
                case 's': {
                    byte[] b = new byte[arg.length() / 2];
                    for (int i = 0; i < b.length; i++) {
                        b[i] = (byte) Integer.parseInt(arg.substring(2 * i, 2 * i + 2), 16);
                    }
                    String s = new String(b, StandardCharsets.UTF_8);
                    StringBuilder sb = new StringBuilder().append(s.hashCode());
                    for (int i = 0; i < s.length(); i++) {
                        sb.append(' ').append(String.format("%04x", (int) s.charAt(i)));
                    }
                    out.println(sb);
                    break;
                }
                case 'i':
                    out.println(Integer.valueOf(Integer.parseInt(arg)).hashCode());
                    break;
                case 'l':
                    out.println(Long.valueOf(Long.parseLong(arg)).hashCode());
                    break;
                default:
                    throw new IllegalArgumentException("bad case: " + line);
            }
        }
        out.flush();
    }
}
