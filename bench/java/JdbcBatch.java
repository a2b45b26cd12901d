import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.sql.Timestamp;

/**
 * pgjdbc's executeBatch, as an ORM or Spark's JDBC writer sends it: ROWS rows into a fresh
 * table, BATCH per executeBatch and per transaction. Prints the rows per second.
 * Arguments: JDBC URL (add reWriteBatchedInserts=true for the rewritten form), ROWS, BATCH.
 */
public class JdbcBatch {
    public static void main(String[] args) throws Exception {
        String url = args[0];
        int rows = Integer.parseInt(args[1]);
        int batch = Integer.parseInt(args[2]);
        try (Connection conn = DriverManager.getConnection(url)) {
            try (Statement s = conn.createStatement()) {
                s.execute("drop table if exists jdbc_batch");
                s.execute("create table jdbc_batch (id bigint primary key, host text, "
                        + "at timestamptz, value double precision)");
            }
            conn.setAutoCommit(false);
            long start = System.nanoTime();
            try (PreparedStatement ps = conn.prepareStatement(
                    "insert into jdbc_batch (id, host, at, value) values (?, ?, ?, ?)")) {
                Timestamp at = new Timestamp(1_700_000_000_000L);
                for (int i = 0; i < rows; i++) {
                    ps.setLong(1, i);
                    ps.setString(2, "host-" + (i % 100));
                    ps.setTimestamp(3, at);
                    ps.setDouble(4, i * 0.5);
                    ps.addBatch();
                    if ((i + 1) % batch == 0 || i + 1 == rows) {
                        ps.executeBatch();
                        conn.commit();
                    }
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            try (Statement s = conn.createStatement();
                 java.sql.ResultSet r = s.executeQuery("select count(*) from jdbc_batch")) {
                r.next();
                if (r.getLong(1) != rows) {
                    throw new IllegalStateException("expected " + rows + " rows, found " + r.getLong(1));
                }
            }
            conn.commit();
            System.out.println(rows / seconds);
        }
    }
}
