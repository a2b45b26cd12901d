-- Queries: DISTINCT ON, VALUES as tables, LATERAL, GROUPING SETS/ROLLUP/CUBE, FILTER,
-- window frames, recursive CTEs, subqueries, PREPARE/EXECUTE.
CREATE TABLE sales (id int PRIMARY KEY, region text, product text, qty int, price numeric(10,2), sold date);
INSERT INTO sales VALUES (1, 'north', 'apple', 10, 1.50, '2024-01-05'), (2, 'north', 'pear', 5, 2.00, '2024-01-06'), (3, 'south', 'apple', 7, 1.55, '2024-02-01'), (4, 'south', 'plum', 3, 3.10, '2024-02-03'), (5, 'east', 'apple', 12, 1.45, '2024-03-09'), (6, 'east', 'pear', NULL, 2.10, '2024-03-10'), (7, 'north', 'plum', 4, 3.00, '2024-03-11');
SELECT DISTINCT ON (region) region, product, qty FROM sales ORDER BY region, qty DESC NULLS LAST;
SELECT DISTINCT ON (product) product, price FROM sales ORDER BY product, price;
SELECT DISTINCT region FROM sales ORDER BY region;
SELECT count(DISTINCT product) FROM sales;
SELECT region, sum(qty) FROM sales GROUP BY region ORDER BY region;
SELECT region, sum(qty) FROM sales GROUP BY region HAVING sum(qty) > 10 ORDER BY region;
SELECT region, product, sum(qty) FROM sales GROUP BY ROLLUP (region, product) ORDER BY region NULLS LAST, product NULLS LAST;
SELECT region, product, sum(qty) FROM sales GROUP BY CUBE (region, product) ORDER BY region NULLS LAST, product NULLS LAST;
SELECT region, product, count(*) FROM sales GROUP BY GROUPING SETS ((region), (product), ()) ORDER BY region NULLS LAST, product NULLS LAST;
SELECT region, grouping(region), sum(qty) FROM sales GROUP BY ROLLUP (region) ORDER BY region NULLS LAST;
SELECT count(*) FILTER (WHERE qty > 5), count(*) FILTER (WHERE product = 'apple') FROM sales;
-- differs: sum(...) FILTER (...) beside GROUP BY: sqlglot's DuckDB output puts FILTER where DuckDB's parser refuses it
SELECT region, sum(qty) FILTER (WHERE product <> 'plum') FROM sales GROUP BY region ORDER BY region;
SELECT id, qty, sum(qty) OVER (ORDER BY id) FROM sales ORDER BY id;
SELECT id, qty, sum(qty) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM sales ORDER BY id;
SELECT id, qty, avg(qty) OVER (PARTITION BY region) FROM sales ORDER BY id;
SELECT id, row_number() OVER (PARTITION BY region ORDER BY id), rank() OVER (ORDER BY product) FROM sales ORDER BY id;
SELECT id, dense_rank() OVER (ORDER BY product), ntile(3) OVER (ORDER BY id) FROM sales ORDER BY id;
SELECT id, lag(qty) OVER (ORDER BY id), lead(qty, 2) OVER (ORDER BY id) FROM sales ORDER BY id;
SELECT id, first_value(product) OVER w, last_value(product) OVER w FROM sales WINDOW w AS (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) ORDER BY id;
SELECT id, count(*) OVER (ORDER BY sold RANGE BETWEEN INTERVAL '3 days' PRECEDING AND CURRENT ROW) FROM sales ORDER BY id;
SELECT id, sum(qty) OVER (ORDER BY id GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM sales ORDER BY id;
SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(n, s) ORDER BY n;
SELECT v.n * 2 FROM (VALUES (1), (2), (3)) v(n) WHERE v.n > 1 ORDER BY 1;
SELECT s.region, v.label FROM sales s JOIN (VALUES ('north', 'N'), ('south', 'S')) v(region, label) ON v.region = s.region ORDER BY s.id;
SELECT s.id, l.total FROM sales s, LATERAL (SELECT sum(qty) AS total FROM sales t WHERE t.region = s.region) l ORDER BY s.id;
SELECT s.id, l.x FROM sales s CROSS JOIN LATERAL (SELECT s.qty * 2 AS x) l ORDER BY s.id;
SELECT s.id, l.product FROM sales s LEFT JOIN LATERAL (SELECT product FROM sales t WHERE t.qty > s.qty ORDER BY t.qty LIMIT 1) l ON true ORDER BY s.id;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT i FROM n ORDER BY i;
WITH RECURSIVE f(i, fact) AS (SELECT 1, 1::bigint UNION ALL SELECT i + 1, fact * (i + 1) FROM f WHERE i < 10) SELECT i, fact FROM f ORDER BY i;
WITH RECURSIVE t(n) AS (SELECT 1 UNION SELECT n FROM t) SELECT n FROM t;
WITH RECURSIVE d(x) AS (SELECT 1 UNION ALL SELECT x * 2 FROM d WHERE x < 100) SELECT count(*), max(x) FROM d;
WITH a AS (SELECT region, sum(qty) AS q FROM sales GROUP BY region) SELECT region FROM a WHERE q = (SELECT max(q) FROM a);
WITH a AS MATERIALIZED (SELECT id FROM sales WHERE qty > 5) SELECT count(*) FROM a;
SELECT id FROM sales WHERE qty > (SELECT avg(qty) FROM sales) ORDER BY id;
SELECT id FROM sales s WHERE EXISTS (SELECT 1 FROM sales t WHERE t.region = s.region AND t.id <> s.id AND t.qty > s.qty) ORDER BY id;
SELECT id FROM sales WHERE product IN (SELECT product FROM sales WHERE region = 'east') ORDER BY id;
SELECT id FROM sales WHERE product NOT IN (SELECT product FROM sales WHERE region = 'south') ORDER BY id;
SELECT id, (SELECT count(*) FROM sales t WHERE t.region = s.region) FROM sales s ORDER BY id;
SELECT id FROM sales WHERE qty > ALL (SELECT qty FROM sales WHERE region = 'south') ORDER BY id;
SELECT id FROM sales WHERE qty = ANY (ARRAY[3, 4, 5]) ORDER BY id;
SELECT region FROM sales UNION SELECT product FROM sales ORDER BY 1;
SELECT region FROM sales INTERSECT SELECT 'north' ORDER BY 1;
SELECT product FROM sales EXCEPT SELECT product FROM sales WHERE region = 'north' ORDER BY 1;
(SELECT id FROM sales ORDER BY id LIMIT 2) UNION ALL (SELECT id FROM sales ORDER BY id DESC LIMIT 2) ORDER BY 1;
SELECT id FROM sales ORDER BY id LIMIT 3 OFFSET 2;
SELECT id FROM sales ORDER BY id OFFSET 5 ROWS FETCH FIRST 1 ROW ONLY;
SELECT id FROM sales ORDER BY qty DESC NULLS FIRST, id LIMIT 3;
SELECT coalesce(qty, 0), nullif(qty, 10) FROM sales ORDER BY id;
SELECT CASE WHEN qty > 8 THEN 'big' WHEN qty > 4 THEN 'mid' ELSE 'small' END FROM sales ORDER BY id;
SELECT greatest(1, 5, 3), least('b', 'a', 'c');
SELECT region, string_agg(product, ',' ORDER BY product) FROM sales GROUP BY region ORDER BY region;
SELECT region, array_agg(id ORDER BY id) FROM sales GROUP BY region ORDER BY region;
SELECT bool_and(qty > 2), bool_or(qty > 11), every(price > 1) FROM sales;
SELECT min(sold), max(sold), max(sold) - min(sold) FROM sales;
SELECT sum(qty * price), avg(price), sum(price) FROM sales;
SELECT product, sum(qty * price) FROM sales GROUP BY product ORDER BY product;
SELECT extract(month FROM sold), count(*) FROM sales GROUP BY 1 ORDER BY 1;
-- differs: date_trunc of a date yields timestamp here, timestamptz in PostgreSQL
SELECT date_trunc('month', sold), sum(qty) FROM sales GROUP BY 1 ORDER BY 1;
-- differs: SQL-level PREPARE is not implemented yet (0A000); the protocol's Parse/Bind is
PREPARE by_region(text) AS SELECT id FROM sales WHERE region = $1 ORDER BY id;
-- differs: SQL-level EXECUTE is not implemented yet (0A000)
EXECUTE by_region('north');
-- differs: SQL-level EXECUTE is not implemented yet (0A000)
EXECUTE by_region('east');
-- differs: follows from PREPARE above: there is no statement to deallocate
DEALLOCATE by_region;
-- differs: SQL-level EXECUTE is not implemented yet (0A000, where PostgreSQL says 26000)
EXECUTE by_region('north');
-- differs: SQL-level PREPARE is not implemented yet (0A000)
PREPARE add_sale(int, text) AS INSERT INTO sales (id, region, product, qty, price, sold) VALUES ($1, $2, 'kiwi', 1, 0.99, '2024-04-01');
-- differs: SQL-level EXECUTE is not implemented yet (0A000)
EXECUTE add_sale(8, 'west');
-- differs: follows from EXECUTE above: the row was not inserted
SELECT id, region, product FROM sales WHERE id = 8;
DEALLOCATE ALL;
SELECT id FROM sales ORDER BY nosuchcolumn;
SELECT nosuchfunction(1);
SELECT region, qty FROM sales GROUP BY region;
SELECT * FROM nosuchtable;
SELECT 1 UNION SELECT 'a';
SELECT id FROM sales WHERE qty > 'x';
DROP TABLE sales;
