package dev.sluice.peers;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Collection;
import java.util.Properties;
import java.util.regex.Pattern;

/**
 * Upserts settlement windows into a sink table shaped like Sluice's (merchant_id, window_start,
 * window_end, settled, refunded, events; key merchant_id, window_start), one JDBC batch per call in
 * its own transaction. Upserting a window's whole value is idempotent, so a replay after a restart
 * leaves the same rows: with the engine's checkpoints that makes the table exactly-once in effect.
 */
public final class PostgresUpsert implements AutoCloseable {
  private static final Pattern TABLE = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
  private final Connection connection;
  private final PreparedStatement upsert;

  public PostgresUpsert(String jdbcUrl, String table) throws SQLException {
    // The table name comes from the benchmark command, never from data; checked all the same.
    if (!TABLE.matcher(table).matches()) throw new IllegalArgumentException("bad table name: " + table);
    // The password, if any, comes from PGPASSWORD (the benchmark never puts it on a command line).
    Properties props = new Properties();
    // The driver sends a batch as multi-row INSERTs, not one statement a row.
    props.setProperty("reWriteBatchedInserts", "true");
    String password = System.getenv("PGPASSWORD");
    if (password != null) props.setProperty("password", password);
    connection = DriverManager.getConnection(jdbcUrl, props);
    connection.setAutoCommit(false);
    upsert = connection.prepareStatement(
        "INSERT INTO " + table + " (merchant_id, window_start, window_end, settled, refunded, events)"
            + " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (merchant_id, window_start) DO UPDATE SET"
            + " window_end = EXCLUDED.window_end, settled = EXCLUDED.settled,"
            + " refunded = EXCLUDED.refunded, events = EXCLUDED.events");
  }

  /** Writes the rows and commits. A key must appear at most once per call (Postgres refuses the same key twice in one INSERT … ON CONFLICT). */
  public void write(Collection<SettlementRow> rows) throws SQLException {
    if (rows.isEmpty()) return;
    for (SettlementRow r : rows) {
      upsert.setString(1, r.merchantId());
      upsert.setObject(2, utc(r.windowStartMs()));
      upsert.setObject(3, utc(r.windowEndMs()));
      upsert.setBigDecimal(4, r.settled());
      upsert.setBigDecimal(5, r.refunded());
      upsert.setLong(6, r.events());
      upsert.addBatch();
    }
    upsert.executeBatch();
    connection.commit();
  }

  private static OffsetDateTime utc(long ms) {
    return OffsetDateTime.ofInstant(Instant.ofEpochMilli(ms), ZoneOffset.UTC);
  }

  @Override
  public void close() throws SQLException {
    upsert.close();
    connection.close();
  }
}
