import com.android.ddmlib.testrunner.ITestRunListener;
import com.android.ddmlib.testrunner.InstrumentationResultParser;
import com.android.ddmlib.testrunner.TestIdentifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Feeds one recorded `am instrument -r` transcript to ddmlib's InstrumentationResultParser (the Android
 * tools' reference) and prints every listener call as one JSON line, so our parser can be compared with it.
 * Run: java -cp ddmlib.jar:guava.jar RefParse.java transcript.txt
 */
public class RefParse {
  public static void main(String[] args) throws Exception {
    byte[] bytes = Files.readAllBytes(Path.of(args[0]));
    InstrumentationResultParser parser = new InstrumentationResultParser("run", new Printer());
    // addOutput + flush is how ddmlib's shell command path drives the receiver (line splitting included).
    parser.addOutput(bytes, 0, bytes.length);
    parser.flush();
  }

  static final class Printer implements ITestRunListener {
    public void testRunStarted(String name, int count) { emit("runStarted", null, "count", String.valueOf(count)); }
    public void testStarted(TestIdentifier t) { emit("testStarted", t, null, null); }
    public void testFailed(TestIdentifier t, String trace) { emit("testFailed", t, "trace", trace); }
    public void testAssumptionFailure(TestIdentifier t, String trace) { emit("testAssumptionFailure", t, "trace", trace); }
    public void testIgnored(TestIdentifier t) { emit("testIgnored", t, null, null); }
    public void testEnded(TestIdentifier t, Map<String, String> metrics) { emit("testEnded", t, null, null); }
    public void testRunFailed(String message) { emit("runFailed", null, "message", message); }
    public void testRunStopped(long elapsed) { emit("runStopped", null, null, null); }
    public void testRunEnded(long elapsed, Map<String, String> metrics) { emit("runEnded", null, null, null); }
  }

  static void emit(String event, TestIdentifier t, String key, String value) {
    StringBuilder out = new StringBuilder("{\"event\":").append(quote(event));
    if (t != null) {
      out.append(",\"classname\":").append(quote(t.getClassName()));
      out.append(",\"name\":").append(quote(t.getTestName()));
    }
    if (key != null) out.append(",\"").append(key).append("\":").append(quote(value));
    System.out.println(out.append('}'));
  }

  static String quote(String s) {
    if (s == null) return "null";
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) b.append(String.format("\\u%04x", (int) c)); else b.append(c);
        }
      }
    }
    return b.append('"').toString();
  }
}
