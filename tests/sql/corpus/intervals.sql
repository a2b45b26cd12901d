-- interval results as PostgreSQL writes them (IntervalStyle postgres), and date/time differences.
SELECT interval '1 day';
SELECT interval '2 days';
SELECT interval '1 hour';
SELECT interval '90 minutes';
SELECT interval '1 day 2 hours 3 minutes 4.5 seconds';
SELECT interval '1 year 2 months 3 days';
SELECT interval '14 months';
SELECT interval '-1 day';
SELECT interval '-1 day 2 hours';
SELECT interval '1 day -2 hours';
SELECT interval '-3 hours';
SELECT interval '0 seconds';
SELECT interval '1.5 seconds';
SELECT interval '0.000001 seconds';
SELECT interval '100 hours';
SELECT interval '1 mon';
SELECT interval '-1 year -2 months';
SELECT interval '1 week';
SELECT interval '3 days' * 2;
SELECT interval '1 day' + interval '1 hour';
SELECT interval '1 hour' - interval '2 hours';
SELECT -interval '1 day';
SELECT interval '1 day' / 2;
SELECT interval '1 day' = interval '24 hours';
SELECT interval '1 day' > interval '23 hours';
SELECT date '2024-03-10' - date '2024-03-01';
SELECT timestamp '2024-03-10 12:00' - timestamp '2024-03-09 10:00';
SELECT timestamp '2024-03-10 12:00' - timestamp '2024-03-10 10:30';
SELECT timestamp '2024-03-10 12:00' - timestamp '2024-01-10 12:00';
SELECT timestamp '2024-03-10 12:00' + interval '1 month';
SELECT date '2024-01-31' + interval '1 month';
SELECT timestamp '2024-03-10 12:00' - interval '36 hours';
SELECT date '2024-03-10' + 5;
SELECT date '2024-03-10' - 5;
SELECT date '2024-03-10' + interval '2 hours';
-- differs: extract(epoch ...) is numeric in PostgreSQL 14+ (six fraction digits), double here
SELECT extract(epoch FROM interval '1 day 1 hour');
SELECT extract(hour FROM interval '1 day 5 hours');
SELECT extract(day FROM interval '40 days');
-- differs: justify_hours is not implemented yet (42883)
SELECT justify_hours(interval '27 hours');
-- differs: justify_days is not implemented yet (42883)
SELECT justify_days(interval '35 days');
-- differs: justify_interval is not implemented yet (42883)
SELECT justify_interval(interval '1 mon -1 hour');
SELECT age(timestamp '2024-03-10', timestamp '2023-01-01');
SELECT make_interval(days => 3, hours => 4);
SELECT interval '1 day'::text;
CREATE TABLE spans (id int PRIMARY KEY, started timestamp, ended timestamp);
INSERT INTO spans VALUES (1, '2024-01-01 10:00', '2024-01-01 12:30'), (2, '2024-01-01 10:00', '2024-01-03 09:00'), (3, '2024-01-01 10:00', NULL);
SELECT id, ended - started FROM spans ORDER BY id;
SELECT id, ended - started AS took FROM spans WHERE ended - started > interval '1 day' ORDER BY id;
-- differs: sum(interval) is not supported by DuckDB; not translated yet
SELECT sum(ended - started) FROM spans;
SELECT avg(ended - started) FROM spans;
SELECT max(ended - started), min(ended - started) FROM spans;
SELECT id FROM spans WHERE started + interval '2 hours' < ended ORDER BY id;
