// What a JDBC monitoring tool reads after a batch of inserts: pg_stat_statements and
// pg_stat_user_tables, printed line by line for tests/e2e/test_statement_statistics.py.
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;

public class JdbcStatistics {
    public static void main(String[] args) throws Exception {
        try (Connection conn = DriverManager.getConnection(args[0])) {
            try (Statement st = conn.createStatement()) {
                st.execute("drop table if exists jdbc_stats");
                st.execute("create table jdbc_stats (id int primary key, v text)");
                st.execute("select pg_stat_statements_reset()");
            }
            try (PreparedStatement ps = conn.prepareStatement("insert into jdbc_stats values (?, ?)")) {
                for (int i = 1; i <= 20; i++) {
                    ps.setInt(1, i);
                    ps.setString(2, "v" + i);
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            try (PreparedStatement ps = conn.prepareStatement("select v from jdbc_stats where id = ?")) {
                for (int i = 1; i <= 7; i++) {
                    ps.setInt(1, i);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            rs.getString(1);
                        }
                    }
                }
            }
            try (Statement st = conn.createStatement();
                 ResultSet rs = st.executeQuery(
                     "select query, calls, rows from pg_stat_statements"
                     + " where query like '%jdbc_stats%' and query not like '%pg_stat%'"
                     + " order by query")) {
                while (rs.next()) {
                    System.out.println("statement: " + rs.getString(1) + " | " + rs.getLong(2)
                        + " | " + rs.getLong(3));
                }
            }
            try (Statement st = conn.createStatement();
                 ResultSet rs = st.executeQuery(
                     "select relname, n_tup_ins, n_live_tup from pg_stat_user_tables"
                     + " where relname = 'jdbc_stats'")) {
                while (rs.next()) {
                    System.out.println("table: " + rs.getString(1) + " | " + rs.getLong(2)
                        + " | " + rs.getLong(3));
                }
            }
        }
    }
}
