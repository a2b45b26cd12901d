import java.sql.Connection;
import java.sql.Date;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

/**
 * Date and time values through pgjdbc from a JVM in some time zone, run by
 * tests/e2e/test_pgjdbc_time_zones.py against nyala and PostgreSQL 15 with -Duser.timezone.
 *
 * <p>Each value is written with a PreparedStatement (java.sql and java.time types), read back
 * with getObject/getTimestamp/getString past pgjdbc's switch to binary results (the fifth
 * execution), and printed one fact a line: the two outputs must be the same.  The values
 * straddle DST changes of America/New_York and reach back before standard time (LMT).
 *
 * <p>Usage: java -Duser.timezone=ZONE -cp postgresql.jar:DIR JdbcTimeScenario JDBC_URL
 */
public final class JdbcTimeScenario {
    private static final String[] WALL_TIMES = {
        "2024-03-10 01:59:59.999999", "2024-03-10 03:00:00", "2024-11-03 01:30:00",
        "2024-11-03 00:59:59.5", "1970-01-01 00:00:00", "1999-12-31 23:59:59.123456",
        "2000-01-01 00:00:00", "1900-06-15 12:00:00", "0010-01-01 00:00:00", "9990-12-31 23:59:59",
    };
    private static final String[] INSTANTS = {
        "2024-03-10T06:59:59Z", "2024-03-10T07:00:00Z", "2024-11-03T05:30:00Z",
        "2024-11-03T06:30:00.25Z", "1970-01-01T00:00:00Z", "2000-01-01T00:00:00+05:30",
        "1883-11-18T17:00:00Z", "2038-01-19T03:14:08Z",
    };

    private JdbcTimeScenario() {}

    public static void main(String[] args) throws Exception {
        try (Connection conn = DriverManager.getConnection(args[0])) {
            print("TimeZone", one(conn, "show timezone"));
            print("DateStyle", one(conn, "show datestyle"));
            try (Statement st = conn.createStatement()) {
                st.execute("drop table if exists jdbc_times");
                st.execute("create table jdbc_times (id integer primary key, d date, "
                        + "ts timestamp, tz timestamptz)");
            }
            int id = 0;
            try (PreparedStatement ps = conn.prepareStatement(
                    "insert into jdbc_times values (?, ?, ?, ?)")) {
                for (String wall : WALL_TIMES) {
                    LocalDateTime local = LocalDateTime.parse(wall.replace(' ', 'T'));
                    ps.setInt(1, ++id);
                    ps.setObject(2, local.toLocalDate());
                    ps.setObject(3, local);
                    ps.setObject(4, local.atOffset(ZoneOffset.UTC));
                    ps.executeUpdate();
                    ps.setInt(1, ++id);
                    ps.setDate(2, Date.valueOf(local.toLocalDate()));
                    ps.setTimestamp(3, Timestamp.valueOf(local));
                    ps.setTimestamp(4, Timestamp.valueOf(local));
                    ps.executeUpdate();
                }
                for (String instant : INSTANTS) {
                    OffsetDateTime at = OffsetDateTime.parse(instant);
                    ps.setInt(1, ++id);
                    ps.setObject(2, at.toLocalDate());
                    ps.setObject(3, at.toLocalDateTime());
                    ps.setObject(4, at);
                    ps.executeUpdate();
                }
            }
            for (int round = 1; round <= 6; round++) {
                print("round " + round, readAll(conn));
            }
            try (PreparedStatement ps = conn.prepareStatement(
                    "select count(*) from jdbc_times where tz >= ? and d <= ?")) {
                for (int round = 1; round <= 6; round++) {
                    ps.setObject(1, OffsetDateTime.parse("2024-03-10T07:00:00Z"));
                    ps.setObject(2, LocalDate.parse("2024-11-03"));
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        print("filtered " + round, rs.getLong(1));
                    }
                }
            }
            print("text", texts(conn));
            try (Statement st = conn.createStatement()) {
                // PostgreSQL is shared by the session's tests: JdbcScenario lists its tables.
                st.execute("drop table jdbc_times");
            }
        }
    }

    private static List<String> readAll(Connection conn) throws Exception {
        List<String> rows = new ArrayList<>();
        try (PreparedStatement ps = conn.prepareStatement(
                "select id, d, ts, tz from jdbc_times where id > ? order by id")) {
            ps.setInt(1, 0);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(rs.getInt(1) + "|" + rs.getObject(2, LocalDate.class) + "|"
                            + rs.getObject(3, LocalDateTime.class) + "|"
                            + rs.getObject(4, OffsetDateTime.class).toInstant() + "|"
                            + rs.getDate(2) + "|" + rs.getTimestamp(3) + "|"
                            + rs.getTimestamp(4).toInstant());
                }
            }
        }
        return rows;
    }

    private static List<String> texts(Connection conn) throws Exception {
        List<String> rows = new ArrayList<>();
        try (Statement st = conn.createStatement();
                ResultSet rs = st.executeQuery("select d, ts, tz from jdbc_times order by id")) {
            while (rs.next()) {
                rows.add(rs.getString(1) + "|" + rs.getString(2) + "|" + rs.getString(3));
            }
        }
        return rows;
    }

    private static String one(Connection conn, String sql) throws Exception {
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static void print(String what, Object value) {
        System.out.println(what + ": " + value);
    }
}
