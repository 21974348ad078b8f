package dev.sluice.peers;

import java.util.HashMap;
import java.util.Map;

/** The jobs' command line: name=value pairs, as the benchmark command passes them. */
public final class Args {
  private final Map<String, String> values = new HashMap<>();

  public Args(String[] argv) {
    for (String a : argv) {
      int eq = a.indexOf('=');
      if (eq <= 0) throw new IllegalArgumentException("arguments are name=value, got: " + a);
      values.put(a.substring(0, eq), a.substring(eq + 1));
    }
  }

  public String get(String name, String fallback) {
    return values.getOrDefault(name, fallback);
  }

  public String require(String name) {
    String v = values.get(name);
    if (v == null || v.isEmpty()) throw new IllegalArgumentException("missing argument " + name + "=…");
    return v;
  }
}
