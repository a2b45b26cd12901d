-- Types and literals: varchar(n) excess spaces, bytea input, money, casts and their errors.
SELECT 'abcd    '::varchar(4);
SELECT 'abcdef'::varchar(4);
SELECT 'ab'::varchar(4);
SELECT 'abcd  '::character varying(4);
SELECT length('abcd    '::varchar(4));
SELECT 'abc'::char(5) || '|';
SELECT length('abc'::char(5));
SELECT 'abcdef'::char(3);
CREATE TABLE vc (id int PRIMARY KEY, v varchar(4));
INSERT INTO vc VALUES (1, 'abcd    ');
INSERT INTO vc VALUES (2, 'abcde');
INSERT INTO vc VALUES (3, 'ab  ');
INSERT INTO vc VALUES (4, 'abcd  x');
SELECT id, v, length(v) FROM vc ORDER BY id;
UPDATE vc SET v = 'wxyz   ' WHERE id = 3;
UPDATE vc SET v = 'vwxyz' WHERE id = 3;
SELECT id, v FROM vc ORDER BY id;
SELECT E'\\xDeAdBeEf'::bytea;
SELECT '\xDeAdBeEf'::bytea;
SELECT '\x'::bytea;
SELECT 'abc'::bytea;
SELECT E'a\\000b'::bytea;
SELECT 'a\\b'::bytea;
SELECT '\xabc'::bytea;
SELECT '\xzz'::bytea;
SELECT length('\xDeAdBeEf'::bytea);
SELECT octet_length('abc'::bytea);
SELECT 'abc'::bytea = '\x616263'::bytea;
CREATE TABLE bt (id int PRIMARY KEY, b bytea);
INSERT INTO bt VALUES (1, '\xDEADBEEF'), (2, 'plain'), (3, E'\\x00ff');
SELECT id, b FROM bt ORDER BY id;
SELECT id, length(b) FROM bt ORDER BY id;
-- differs: money is refused with 0A000 on purpose (the issue asks for that)
SELECT '12.50'::money;
-- differs: money is refused with 0A000 on purpose (the issue asks for that)
CREATE TABLE m (id int PRIMARY KEY, amount money);
SELECT 1::int2, 32767::int2;
SELECT 32768::int2;
SELECT 2147483648::int4;
SELECT '2147483647'::int4 + 1;
SELECT 9223372036854775807::int8 + 1;
SELECT 'abc'::int;
SELECT ''::int;
SELECT ' 12 '::int;
SELECT '12.5'::int;
SELECT 12.5::int;
SELECT 13.5::int;
SELECT -12.5::int;
SELECT 2.5::int, 3.5::int, (-2.5)::int;
SELECT 1e10::int;
SELECT '1e3'::float8;
SELECT 'NaN'::float8, 'Infinity'::float8, '-Infinity'::float8;
-- differs: numeric NaN is refused with 0A000: nyala holds numeric in 128-bit decimals, which have no NaN
SELECT 'nan'::numeric;
SELECT 1.5::float4;
SELECT 0.1::float8 + 0.2::float8;
SELECT 1/3::float8;
SELECT 12.345::numeric(5,2);
SELECT 123.456::numeric(4,2);
SELECT 'abc'::numeric;
SELECT 'true'::boolean, 'yes'::boolean, 'off'::boolean, '0'::boolean;
SELECT 'maybe'::boolean;
SELECT '2024-02-30'::date;
SELECT '2024-13-01'::date;
SELECT 'not a date'::date;
SELECT '2024-01-01 25:00:00'::timestamp;
SELECT '2024-01-01 24:00:00'::timestamp;
-- differs: date input accepts ISO forms only (DuckDB's parser); PostgreSQL's other date input forms are not implemented
SELECT '20240115'::date;
-- differs: date input accepts ISO forms only (DuckDB's parser); PostgreSQL's other date input forms are not implemented
SELECT 'January 15, 2024'::date;
SELECT '2024-01-15'::date::text;
SELECT 123::text, 1.50::text, true::text;
-- differs: the name type is not implemented yet
SELECT 'x'::name;
SELECT 'abc'::text::varchar(2);
SELECT cast('42' as integer) + 1;
SELECT '42'::bigint * 2;
SELECT 7 / 2, 7 % 2, -7 / 2, -7 % 2;
SELECT 7.0 / 2;
SELECT 1 / 0;
SELECT 1.0 / 0;
SELECT 5 % 0;
SELECT 2 ^ 10;
-- differs: prefix |/ is parsed as sqrt and named after it; PostgreSQL names the operator ?column?
SELECT |/ 16;
-- differs: prefix @ (absolute value) is not parsed
SELECT @ -5;
SELECT 5 !;
