import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Arrays;

/**
 * Arrays through pgjdbc, run by tests/e2e/test_array_output.py against nyala and PostgreSQL 15.
 *
 * <p>Each query runs as a PreparedStatement seven times, past pgjdbc's switch to a named
 * statement and binary results (the fifth execution); every execution prints each column's
 * type name, getString and getArray's elements: the two outputs must be the same.
 *
 * <p>Then arrays go the other way: setArray parameters in = ANY(?) and casts, text and
 * (past the fifth execution) binary.
 *
 * <p>Usage: java -cp postgresql.jar:DIR JdbcArrays JDBC_URL
 */
public final class JdbcArrays {
    private static final String[] QUERIES = {
        "SELECT ARRAY[id, id * 10, NULL] AS ints, ARRAY[id::bigint] AS bigs,"
            + " ARRAY[id::smallint] AS smalls FROM jdbc_arr ORDER BY id",
        "SELECT ARRAY[s, 'x y', ''] AS texts, ARRAY[b] AS bools FROM jdbc_arr ORDER BY id",
        "SELECT ARRAY[f, 2.5::float8] AS floats, ARRAY[n] AS nums FROM jdbc_arr ORDER BY id",
        "SELECT ARRAY[d] AS dates FROM jdbc_arr ORDER BY id",
        "SELECT ARRAY[[id, 1], [2, 3]] AS nested, ARRAY[id]::text AS as_text FROM jdbc_arr ORDER BY id",
        "SELECT relacl FROM pg_class WHERE relname = 'jdbc_arr'",
    };

    private JdbcArrays() {}

    public static void main(String[] args) throws Exception {
        try (Connection conn = DriverManager.getConnection(args[0])) {
            try (Statement st = conn.createStatement()) {
                st.execute("DROP TABLE IF EXISTS jdbc_arr");
                st.execute("CREATE TABLE jdbc_arr (id int PRIMARY KEY, s text, b boolean,"
                    + " f float8, n numeric(6,2), d date)");
                st.execute("INSERT INTO jdbc_arr VALUES (1, 'a,b', true, 1.5, 1.25, '2020-01-02'),"
                    + " (2, NULL, NULL, NULL, NULL, NULL), (3, 'q\"q', false, -0.5, -3.00, '1999-12-31')");
                st.execute("GRANT SELECT ON jdbc_arr TO PUBLIC");
            }
            for (String sql : QUERIES) {
                try (PreparedStatement ps = conn.prepareStatement(sql)) {
                    for (int run = 1; run <= 7; run++) {
                        try (ResultSet rs = ps.executeQuery()) {
                            int columns = rs.getMetaData().getColumnCount();
                            while (rs.next()) {
                                StringBuilder line = new StringBuilder("run " + run + ":");
                                for (int c = 1; c <= columns; c++) {
                                    line.append(" | ").append(rs.getMetaData().getColumnTypeName(c));
                                    line.append(" ").append(rs.getString(c));
                                    if (rs.getMetaData().getColumnTypeName(c).startsWith("_")) {
                                        Array array = rs.getArray(c);
                                        line.append(" ").append(array == null ? "null"
                                            : Arrays.deepToString((Object[]) array.getArray()));
                                    }
                                }
                                System.out.println(line);
                            }
                        }
                    }
                }
            }
            String[][] params = {
                {"SELECT id FROM jdbc_arr WHERE id = ANY(?) ORDER BY id", "int4"},
                {"SELECT id FROM jdbc_arr WHERE s = ANY(?) ORDER BY id", "text"},
                {"SELECT cardinality(?::int8[]) AS n", "int8"},
            };
            for (String[] query : params) {
                try (PreparedStatement ps = conn.prepareStatement(query[0])) {
                    for (int run = 1; run <= 7; run++) {
                        Object[] values = query[1].equals("text")
                            ? new Object[] {"a,b", "q\"q", null}
                            : query[1].equals("int8") ? new Object[] {1L, 2L, (long) run}
                            : new Object[] {1, 3, run};
                        ps.setArray(1, conn.createArrayOf(query[1], values));
                        try (ResultSet rs = ps.executeQuery()) {
                            StringBuilder line = new StringBuilder("param run " + run + ":");
                            while (rs.next()) {
                                line.append(" ").append(rs.getString(1));
                            }
                            System.out.println(line);
                        }
                    }
                }
            }
            try (Statement st = conn.createStatement()) {
                st.execute("DROP TABLE jdbc_arr");
            }
        }
    }
}
