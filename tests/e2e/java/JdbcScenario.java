import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.Date;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * One pgjdbc scenario, run by tests/e2e/test_pgjdbc.py against nyala and against PostgreSQL 15.
 *
 * <p>Everything a JDBC application or BI tool can observe is printed one fact a line, so the two
 * outputs can be compared as text: PreparedStatement round trips of every type (past the fifth
 * execution, when pgjdbc switches to a named statement and binary results), executeBatch with
 * and without reWriteBatchedInserts, transactions, ResultSetMetaData and DatabaseMetaData.
 *
 * <p>Usage: java -cp postgresql.jar:DIR JdbcScenario JDBC_URL
 */
public final class JdbcScenario {
    private static final Set<String> TYPES_SHOWN =
            Set.of("bool", "int2", "int4", "int8", "float4", "float8", "numeric", "varchar",
                    "text", "date", "timestamp", "timestamptz", "bytea");

    private JdbcScenario() {}

    public static void main(String[] args) throws Exception {
        String url = args[0];
        try (Connection conn = DriverManager.getConnection(url)) {
            print("isolation", conn.getTransactionIsolation());
            print("autocommit", conn.getAutoCommit());
            setUp(conn);
            preparedEveryType(conn);
            transactions(conn);
            batches(conn, "plain");
            resultSetMetaData(conn);
            metaData(conn);
        }
        try (Connection conn = DriverManager.getConnection(url + "&reWriteBatchedInserts=true")) {
            batches(conn, "rewritten");
        }
    }

    private static void print(String what, Object value) {
        System.out.println(what + ": " + value);
    }

    private static void setUp(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.execute("drop table if exists jdbc_types");
            st.execute("drop table if exists jdbc_batch");
            st.execute(
                    "create table jdbc_types (id integer primary key, b boolean, s smallint, "
                            + "l bigint, r real, d double precision, n numeric(10,2), "
                            + "v varchar(20) not null, t text, dt date, ts timestamp, "
                            + "tz timestamp with time zone, by bytea)");
            st.execute("create table jdbc_batch (id bigint primary key, name text)");
            st.execute("create unique index jdbc_types_v on jdbc_types (v)");
            st.execute("create index jdbc_types_l_s on jdbc_types (l, s)");
            st.execute("comment on table jdbc_types is 'every type'");
            st.execute("grant select, insert on jdbc_types to public");
            st.execute("grant update (v, t), references (id) on jdbc_types to public");
        }
    }

    private static void preparedEveryType(Connection conn) throws SQLException {
        String insert = "insert into jdbc_types values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
        try (PreparedStatement ps = conn.prepareStatement(insert)) {
            for (int i = 1; i <= 7; i++) {
                ps.setInt(1, i);
                ps.setBoolean(2, i % 2 == 0);
                ps.setShort(3, (short) (i * 100));
                ps.setLong(4, 10_000_000_000L * i);
                ps.setFloat(5, 1.5f * i);
                ps.setDouble(6, 0.1 * i);
                ps.setBigDecimal(7, new BigDecimal("1234.5").multiply(BigDecimal.valueOf(i)));
                ps.setString(8, "v" + i);
                if (i == 3) {
                    ps.setNull(9, java.sql.Types.VARCHAR);
                } else {
                    ps.setString(9, "text ünï " + i);
                }
                ps.setDate(10, Date.valueOf("2024-01-0" + i));
                ps.setTimestamp(11, Timestamp.valueOf("2024-02-03 04:05:0" + i + ".25"));
                ps.setTimestamp(12, Timestamp.valueOf("2024-02-03 04:05:06"));
                ps.setBytes(13, new byte[] {0, (byte) i, (byte) 0xff});
                print("insert " + i, ps.executeUpdate());
            }
        }
        try (PreparedStatement ps = conn.prepareStatement(
                "select id, b, s, l, r, d, n, v, t, dt, ts, tz, by from jdbc_types where id = ?")) {
            for (int i = 1; i <= 7; i++) {
                ps.setInt(1, i);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        print("row " + i, row(rs));
                    }
                }
            }
        }
        try (PreparedStatement ps = conn.prepareStatement(
                "select count(*), sum(n), max(ts) from jdbc_types where l > ?")) {
            for (int i = 1; i <= 6; i++) {
                ps.setLong(1, 10_000_000_000L * i);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    print("aggregate " + i, rs.getLong(1) + " " + rs.getBigDecimal(2) + " "
                            + rs.getTimestamp(3));
                }
            }
        }
    }

    private static String row(ResultSet rs) throws SQLException {
        List<String> cells = new ArrayList<>();
        cells.add(String.valueOf(rs.getInt("id")));
        cells.add(String.valueOf(rs.getBoolean("b")));
        cells.add(String.valueOf(rs.getShort("s")));
        cells.add(String.valueOf(rs.getLong("l")));
        cells.add(String.valueOf(rs.getFloat("r")));
        cells.add(String.valueOf(rs.getDouble("d")));
        cells.add(String.valueOf(rs.getBigDecimal("n")));
        cells.add(rs.getString("v"));
        cells.add(String.valueOf(rs.getString("t")));
        cells.add(String.valueOf(rs.getDate("dt")));
        cells.add(String.valueOf(rs.getTimestamp("ts")));
        cells.add(String.valueOf(rs.getTimestamp("tz").toInstant()));
        cells.add(Arrays.toString(rs.getBytes("by")));
        for (int c = 1; c <= 13; c++) {
            cells.add(rs.getObject(c) == null ? "null" : rs.getObject(c).getClass().getSimpleName());
        }
        return String.join(" | ", cells);
    }

    private static void transactions(Connection conn) throws SQLException {
        conn.setAutoCommit(false);
        try (Statement st = conn.createStatement()) {
            st.executeUpdate("insert into jdbc_batch values (1000, 'rolled back')");
            conn.rollback();
            st.executeUpdate("insert into jdbc_batch values (1001, 'committed')");
            conn.commit();
            try {
                st.executeUpdate("insert into jdbc_batch values (1001, 'duplicate')");
            } catch (SQLException e) {
                print("duplicate sqlstate", e.getSQLState());
                conn.rollback();
            }
            try (ResultSet rs = st.executeQuery("select id, name from jdbc_batch order by id")) {
                while (rs.next()) {
                    print("after transactions", rs.getLong(1) + " " + rs.getString(2));
                }
            }
            conn.commit();
            conn.setReadOnly(true);
            try {
                st.executeUpdate("insert into jdbc_batch values (1002, 'read only')");
            } catch (SQLException e) {
                print("read only sqlstate", e.getSQLState());
            }
            conn.rollback();
            conn.setReadOnly(false);
        }
        conn.setAutoCommit(true);
        try (Statement st = conn.createStatement()) {
            st.executeUpdate("delete from jdbc_batch");
        }
    }

    private static void batches(Connection conn, String label) throws SQLException {
        conn.setAutoCommit(false);
        try (PreparedStatement ps = conn.prepareStatement(
                "insert into jdbc_batch (id, name) values (?, ?)")) {
            int base = label.equals("plain") ? 0 : 100;
            for (int i = 1; i <= 10; i++) {
                ps.setLong(1, base + i);
                ps.setString(2, label + " " + i);
                ps.addBatch();
            }
            print(label + " batch", Arrays.toString(ps.executeBatch()));
        }
        conn.commit();
        conn.setAutoCommit(true);
        try (Statement st = conn.createStatement();
                ResultSet rs = st.executeQuery(
                        "select count(*), min(name), max(id) from jdbc_batch where name like '"
                                + label + "%'")) {
            rs.next();
            print(label + " batch rows", rs.getLong(1) + " " + rs.getString(2) + " " + rs.getLong(3));
        }
    }

    private static void resultSetMetaData(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement();
                ResultSet rs = st.executeQuery("select id, v, n, t, 1 + 1 as two from jdbc_types where false")) {
            ResultSetMetaData md = rs.getMetaData();
            for (int c = 1; c <= md.getColumnCount(); c++) {
                print("rsmd " + md.getColumnLabel(c), md.getColumnTypeName(c) + " "
                        + md.getColumnType(c) + " table=" + md.getTableName(c) + " nullable="
                        + md.isNullable(c) + " precision=" + md.getPrecision(c) + " scale="
                        + md.getScale(c) + " auto=" + md.isAutoIncrement(c));
            }
        }
    }

    private static void metaData(Connection conn) throws SQLException {
        DatabaseMetaData md = conn.getMetaData();
        print("product", md.getDatabaseProductName() + " " + md.getDatabaseMajorVersion());
        try (ResultSet rs = md.getTables(null, "public", "jdbc%", new String[] {"TABLE"})) {
            while (rs.next()) {
                print("table", rs.getString("TABLE_CAT") + " " + rs.getString("TABLE_SCHEM") + " "
                        + rs.getString("TABLE_NAME") + " " + rs.getString("TABLE_TYPE") + " "
                        + rs.getString("REMARKS"));
            }
        }
        try (ResultSet rs = md.getColumns(null, "public", "jdbc_types", "%")) {
            while (rs.next()) {
                print("column", rs.getString("COLUMN_NAME") + " " + rs.getInt("DATA_TYPE") + " "
                        + rs.getString("TYPE_NAME") + " size=" + rs.getInt("COLUMN_SIZE")
                        + " digits=" + rs.getInt("DECIMAL_DIGITS") + " nullable="
                        + rs.getInt("NULLABLE") + " pos=" + rs.getInt("ORDINAL_POSITION") + " "
                        + rs.getString("IS_NULLABLE") + " default=" + rs.getString("COLUMN_DEF")
                        + " auto=" + rs.getString("IS_AUTOINCREMENT"));
            }
        }
        try (ResultSet rs = md.getTablePrivileges(null, "public", "jdbc_types")) {
            while (rs.next()) {
                print("table privilege", rs.getString("TABLE_NAME") + " " + rs.getString("GRANTOR")
                        + " " + rs.getString("GRANTEE") + " " + rs.getString("PRIVILEGE") + " "
                        + rs.getString("IS_GRANTABLE"));
            }
        }
        try (ResultSet rs = md.getColumnPrivileges(null, "public", "jdbc_types", "%")) {
            while (rs.next()) {
                print("column privilege", rs.getString("TABLE_NAME") + " "
                        + rs.getString("COLUMN_NAME") + " " + rs.getString("GRANTOR") + " "
                        + rs.getString("GRANTEE") + " " + rs.getString("PRIVILEGE") + " "
                        + rs.getString("IS_GRANTABLE"));
            }
        }
        try (ResultSet rs = md.getPrimaryKeys(null, "public", "jdbc_types")) {
            while (rs.next()) {
                print("primary key", rs.getString("TABLE_NAME") + " " + rs.getString("COLUMN_NAME")
                        + " " + rs.getInt("KEY_SEQ") + " " + rs.getString("PK_NAME"));
            }
        }
        try (ResultSet rs = md.getImportedKeys(null, "public", "jdbc_types")) {
            int keys = 0;
            while (rs.next()) {
                keys++;
            }
            print("imported keys", keys);
        }
        try (ResultSet rs = md.getExportedKeys(null, "public", "jdbc_types")) {
            int keys = 0;
            while (rs.next()) {
                keys++;
            }
            print("exported keys", keys);
        }
        try (ResultSet rs = md.getTableTypes()) {
            List<String> types = new ArrayList<>();
            while (rs.next()) {
                types.add(rs.getString(1));
            }
            print("table types", types);
        }
        try (ResultSet rs = md.getColumns(null, "pg_catalog", "pg_namespace", "nspname")) {
            while (rs.next()) {
                print("catalog column", rs.getString("TABLE_NAME") + "." + rs.getString("COLUMN_NAME"));
            }
        }
        try (ResultSet rs = md.getIndexInfo(null, "public", "jdbc_types", false, true)) {
            while (rs.next()) {
                print("index", rs.getString("TABLE_NAME") + " unique=" + !rs.getBoolean("NON_UNIQUE")
                        + " " + rs.getString("INDEX_NAME") + " type=" + rs.getShort("TYPE") + " pos="
                        + rs.getShort("ORDINAL_POSITION") + " " + rs.getString("COLUMN_NAME") + " "
                        + rs.getString("ASC_OR_DESC"));
            }
        }
        try (ResultSet rs = md.getSchemas()) {
            while (rs.next()) {
                String schema = rs.getString("TABLE_SCHEM");
                if (Set.of("public", "pg_catalog", "information_schema").contains(schema)) {
                    print("schema", schema);
                }
            }
        }
        try (ResultSet rs = md.getCatalogs()) {
            while (rs.next()) {
                if (rs.getString(1).equals(conn.getCatalog())) {
                    print("catalog", rs.getString(1));
                }
            }
        }
        try (ResultSet rs = md.getTypeInfo()) {
            while (rs.next()) {
                String name = rs.getString("TYPE_NAME");
                if (TYPES_SHOWN.contains(name)) {
                    print("type", name + " " + rs.getInt("DATA_TYPE") + " precision="
                            + rs.getInt("PRECISION") + " nullable=" + rs.getShort("NULLABLE")
                            + " case=" + rs.getBoolean("CASE_SENSITIVE") + " searchable="
                            + rs.getShort("SEARCHABLE"));
                }
            }
        }
    }
}
