import java.sql.*;
import java.util.UUID;
import org.postgresql.util.PGobject;

/** uuid, json and jsonb through pgjdbc: what getObject gives, in text and (from the 5th
 * execution of a prepared statement) binary results. One fact a line. */
public class JdbcJsonUuid {
    public static void main(String[] args) throws Exception {
        try (Connection conn = DriverManager.getConnection(args[0])) {
            try (Statement st = conn.createStatement()) {
                st.execute("drop table if exists jdbc_ju");
                st.execute("create table jdbc_ju (id uuid primary key, doc jsonb, raw json)");
            }
            UUID key = UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
            try (PreparedStatement ps = conn.prepareStatement("insert into jdbc_ju values (?, ?, ?)")) {
                PGobject doc = new PGobject();
                doc.setType("jsonb");
                doc.setValue("{\"b\": 1, \"a\": [1.0, 1e3]}");
                PGobject raw = new PGobject();
                raw.setType("json");
                raw.setValue("{\"b\":1,  \"a\":2}");
                ps.setObject(1, key);
                ps.setObject(2, doc);
                ps.setObject(3, raw);
                System.out.println("inserted: " + ps.executeUpdate());
            }
            try (PreparedStatement ps = conn.prepareStatement(
                    "select id, doc, raw, doc -> 'a', doc ->> 'b' from jdbc_ju where id = ?")) {
                for (int run = 1; run <= 6; run++) {
                    ps.setObject(1, key);
                    try (ResultSet rs = ps.executeQuery()) {
                        ResultSetMetaData md = rs.getMetaData();
                        while (rs.next()) {
                            StringBuilder line = new StringBuilder("run " + run + ":");
                            for (int i = 1; i <= md.getColumnCount(); i++) {
                                Object value = rs.getObject(i);
                                line.append(" ").append(md.getColumnTypeName(i)).append("=")
                                    .append(value == null ? "null" : value.getClass().getSimpleName())
                                    .append("(").append(value).append(")");
                            }
                            System.out.println(line);
                        }
                    }
                }
            }
            try (Statement st = conn.createStatement()) {
                st.execute("drop table jdbc_ju");
            }
        }
    }
}
