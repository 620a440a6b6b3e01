// Utf8Decode decodes byte strings the way Kafka's StringDeserializer does,
// new String(bytes, StandardCharsets.UTF_8), for
// TestStringHashCodeMatchesJDKOnInvalidUTF8.
//
// Run: java assign/testdata/Utf8Decode.java < cases   (Java 17+, single-file
// source launch; no dependencies).
//
// Input: one byte string per line, as lowercase or uppercase hex digits (an
// empty line is the empty byte string). Output: one line per input line,
// "<String.hashCode() in decimal>" followed by the UTF-16 code units of the
// decoded string, each as " " and four lowercase hex digits.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

public class Utf8Decode {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintWriter out = new PrintWriter(System.out, false);
        StringBuilder sb = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.length() % 2 != 0) {
                throw new IllegalArgumentException("odd hex length: " + line);
            }
            byte[] b = new byte[line.length() / 2];
            for (int i = 0; i < b.length; i++) {
                b[i] = (byte) Integer.parseInt(line.substring(2 * i, 2 * i + 2), 16);
            }
            String s = new String(b, StandardCharsets.UTF_8);
            sb.setLength(0);
            sb.append(s.hashCode());
            for (int i = 0; i < s.length(); i++) {
                sb.append(' ');
                String h = Integer.toHexString(s.charAt(i));
                for (int k = h.length(); k < 4; k++) {
                    sb.append('0');
                }
                sb.append(h);
            }
            out.println(sb);
        }
        out.flush();
    }
}
