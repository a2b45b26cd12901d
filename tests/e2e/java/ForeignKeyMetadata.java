import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;

/** Prints what pgjdbc's DatabaseMetaData says about the foreign keys of the fk_* tables. */
public class ForeignKeyMetadata {
    private static void print(String what, ResultSet rs) throws SQLException {
        while (rs.next()) {
            System.out.println(what + ": " + rs.getString("PKTABLE_NAME") + "." + rs.getString("PKCOLUMN_NAME")
                    + " <- " + rs.getString("FKTABLE_NAME") + "." + rs.getString("FKCOLUMN_NAME")
                    + " seq=" + rs.getShort("KEY_SEQ") + " update=" + rs.getShort("UPDATE_RULE")
                    + " delete=" + rs.getShort("DELETE_RULE") + " fk=" + rs.getString("FK_NAME")
                    + " pk=" + rs.getString("PK_NAME") + " deferrability=" + rs.getShort("DEFERRABILITY")
                    + " schema=" + rs.getString("PKTABLE_SCHEM") + "/" + rs.getString("FKTABLE_SCHEM"));
        }
        rs.close();
    }

    public static void main(String[] args) throws Exception {
        try (Connection conn = DriverManager.getConnection(args[0])) {
            DatabaseMetaData md = conn.getMetaData();
            print("imported by fk_order", md.getImportedKeys(null, "public", "fk_order"));
            print("imported by fk_line", md.getImportedKeys(null, "public", "fk_line"));
            print("exported by fk_customer", md.getExportedKeys(null, "public", "fk_customer"));
            print("exported by fk_order", md.getExportedKeys(null, "public", "fk_order"));
            print("cross fk_customer fk_line",
                    md.getCrossReference(null, "public", "fk_customer", null, "public", "fk_line"));
        }
    }
}
