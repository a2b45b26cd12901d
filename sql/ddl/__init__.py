"""Schema changes through the catalog: tables, partitions, ALTER TABLE, comments, roles.

- ``tables``: CREATE TABLE and DROP TABLE; ``alter_table``: ALTER TABLE;
  ``partitions``: PARTITION BY, PARTITION OF, range partitions.
- ``comments``: COMMENT ON into the durable comment store; ``roles``: CREATE/ALTER/DROP ROLE.
- ``extensions``: CREATE/DROP EXTENSION of the extensions nyala has built in.
- ``indexes``: CREATE/DROP/ALTER INDEX, UNIQUE constraints; ``concurrent_index``: CREATE
  INDEX CONCURRENTLY in two transactions.
"""
