"""The scripted statements both Debezium and gtidmark see, run on the session primary."""

from __future__ import annotations

# Tables present (with rows) before both connectors start: Debezium's initial snapshot and
# gtidmark's execute-snapshot read them. `snap_sk` is snapshotted with a surrogate key.
SNAPSHOT_SETUP = [
    """CREATE TABLE snap (
        id INT PRIMARY KEY, f FLOAT, fmd FLOAT(7,3), d DOUBLE, dec2 DECIMAL(12,4),
        vc VARCHAR(20), dtm6 DATETIME(6), ts TIMESTAMP NULL, j JSON, pt POINT,
        g GEOMETRY, b9 BIT(9), e ENUM('a','b'), s SET('x','y'), yr YEAR, tm TIME(3),
        n INT NOT NULL DEFAULT 3)""",
    """INSERT INTO snap VALUES
        (1, 123456.7, 1234.567, 1.7976931348623157E308, -12345678.1234, 'a', '2020-01-02
         03:04:05.123456', '2021-06-07 08:09:10', '{"k": [1, 2]}', ST_GeomFromText('POINT(1 2)'),
         ST_GeomFromText('LINESTRING(0 0, 1 1)'), b'101010101', 'b', 'x,y', 2155, '-838:59:59',
         4),
        (2, -1.17549e-38, -9999.999, -2.2250738585072014E-308, 0.0001, '', '1000-01-01
         00:00:00', '1970-01-01 00:00:01', 'null', NULL, NULL, b'0', 'a', '', 1901,
         '838:59:59', 5),
        (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
         NULL, 6)""",
    "CREATE TABLE snap_sk (id INT PRIMARY KEY, code VARCHAR(8) NOT NULL UNIQUE, v INT)",
    "INSERT INTO snap_sk VALUES (1, 'c3', 10), (2, 'c1', 20), (3, 'c2', 30)",
]

ALL_TYPES = """CREATE TABLE alltypes (
    id INT PRIMARY KEY,
    ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED, mi MEDIUMINT,
    miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED, bo BOOLEAN,
    dec1 DECIMAL(10,2), dec2 DECIMAL(65,30), dec0 DECIMAL(5,0), decu DECIMAL(6,2) UNSIGNED,
    f FLOAT, fmd FLOAT(7,3), d DOUBLE, dmd DOUBLE(10,4), r REAL,
    b1 BIT(1), b9 BIT(9), b64 BIT(64),
    c CHAR(5), vc VARCHAR(20), tt TINYTEXT, t TEXT, mt MEDIUMTEXT, lt LONGTEXT,
    c_latin CHAR(3) CHARACTER SET latin1,
    bn BINARY(4), vb VARBINARY(10), tb TINYBLOB, bl BLOB, mb MEDIUMBLOB, lb LONGBLOB,
    dt DATE, tm TIME, tm6 TIME(6), dtm DATETIME, dtm3 DATETIME(3), dtm6 DATETIME(6),
    ts TIMESTAMP NULL, ts3 TIMESTAMP(3) NULL, ts6 TIMESTAMP(6) NULL, yr YEAR,
    e ENUM('a','b','c'), s SET('x','y','z'), j JSON,
    g GEOMETRY, pt POINT, ls LINESTRING, pg POLYGON, mpt MULTIPOINT, gc GEOMETRYCOLLECTION
)"""

ALL_TYPES_ROWS = [
    # minimum edges
    """INSERT INTO alltypes VALUES (1, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0,
        -9223372036854775808, 0, 0, -99999999.99, -99999999999999999999999999999999999.999999999999999999999999999999,
        -99999, 0.00, -3.40282e38, -9999.999, -1.7976931348623157E308, -999999.9999, -1.5,
        b'0', b'000000000', b'0', '', '', '', '', '', '', '',
        '', '', '', '', '', '', '1000-01-01', '-838:59:59', '-838:59:59.999999',
        '1000-01-01 00:00:00', '1000-01-01 00:00:00.000', '1000-01-01 00:00:00.000000',
        '1970-01-01 00:00:01', '1970-01-01 00:00:01.000', '1970-01-01 00:00:01.000000', 1901,
        'a', '', '[]', ST_GeomFromText('POINT(0 0)'), ST_GeomFromText('POINT(-1.5 2.25)'),
        ST_GeomFromText('LINESTRING(0 0, 1 1, 2 0)'),
        ST_GeomFromText('POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))'),
        ST_GeomFromText('MULTIPOINT(0 0, 1 2)'),
        ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1), LINESTRING(0 0, 1 1))'))""",
    # maximum edges
    """INSERT INTO alltypes VALUES (2, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647,
        4294967295, 9223372036854775807, 18446744073709551615, 1, 99999999.99,
        99999999999999999999999999999999999.999999999999999999999999999999, 99999, 9999.99,
        3.40282e38, 9999.999, 1.7976931348623157E308, 999999.9999, 123456.7, b'1', b'111111111',
        b'1111111111111111111111111111111111111111111111111111111111111111', 'abcde',
        'zürich ☃ 𝄞', 'tiny', 'text', 'medium', 'long', 'äöü', x'00010203', x'ff00', x'01',
        x'0203', x'04', x'05', '9999-12-31', '838:59:59', '838:59:59.000000',
        '9999-12-31 23:59:59', '9999-12-31 23:59:59.999', '9999-12-31 23:59:59.999999',
        '2038-01-19 03:14:07', '2038-01-19 03:14:07.999', '2038-01-19 03:14:07.999999', 2155,
        'c', 'x,y,z', '{"a": {"b": [1, 2.5, "x", null, true]}, "u": "ü"}',
        ST_GeomFromText('POLYGON((0 0, 1 0, 1 1, 0 0))'), ST_GeomFromText('POINT(1e10 -1e-10)'),
        NULL, NULL, NULL, NULL)""",
    # NULL everywhere
    "INSERT INTO alltypes (id) VALUES (3)",
    # values in the middle
    """INSERT INTO alltypes (id, f, fmd, d, dec1, tm, dtm3, ts, j, s, b9, vb, yr) VALUES
        (4, 0.1, 1.5, 0.1, 0.5, '12:34:56', '2024-02-29 12:00:00.5', '2024-02-29 12:00:00',
        '"str"', 'z', b'100000001', x'', 2000)""",
    ("UPDATE alltypes SET f = 123456.7, vc = 'updated', dtm6 = '2001-02-03 04:05:06.000007' "
     "WHERE id = 3"),
    "DELETE FROM alltypes WHERE id = 4",
]

DEFAULTS = """CREATE TABLE defaults (
    id INT PRIMARY KEY, a INT NOT NULL DEFAULT 7, b VARCHAR(10) DEFAULT 'x',
    c DECIMAL(5,2) DEFAULT 1.50, d DATETIME DEFAULT '2020-01-02 03:04:05',
    e ENUM('p','q') DEFAULT 'q', f FLOAT DEFAULT 1.5, g BIT(1) DEFAULT b'1',
    h TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, k BOOLEAN DEFAULT TRUE,
    l BIGINT UNSIGNED DEFAULT 5, m DATE DEFAULT '2001-02-03', n TIME DEFAULT '01:02:03',
    o YEAR DEFAULT 2020, p VARCHAR(4) NOT NULL DEFAULT '', q DOUBLE DEFAULT -2.5,
    r SET('s','t') DEFAULT 's,t', u INT NULL DEFAULT NULL, w INT NOT NULL
)"""

# NULL written into columns with a DEFAULT: Kafka Connect's JsonConverter writes the default
# (value.converter.replace.null.with.default, true by default), in before and after.
NULL_DEFAULTS = """CREATE TABLE null_defaults (
    id INT PRIMARY KEY, e ENUM('a','b','c') DEFAULT 'b', vc VARCHAR(40) DEFAULT 'abc',
    n INT DEFAULT 5, dec2 DECIMAL(5,2) DEFAULT 1.25, plain INT)"""
NULL_DEFAULTS_ROWS = [
    "INSERT INTO null_defaults (id, e, vc, n, dec2) VALUES (1, NULL, NULL, NULL, NULL)",
    "INSERT INTO null_defaults (id, plain) VALUES (2, 7)",
    "UPDATE null_defaults SET e = 'a', vc = NULL WHERE id = 2",
    "DELETE FROM null_defaults WHERE id = 1",
]

STREAMING = [
    ALL_TYPES, *ALL_TYPES_ROWS,
    NULL_DEFAULTS, *NULL_DEFAULTS_ROWS,
    DEFAULTS,
    "INSERT INTO defaults (id, h, w) VALUES (1, '2022-01-01 00:00:00', 1)",
    ("ALTER TABLE defaults ADD COLUMN x INT NOT NULL DEFAULT 42, ADD COLUMN y VARCHAR(3) "
     "DEFAULT 'yy'"),
    "INSERT INTO defaults (id, h, w) VALUES (2, '2022-01-01 00:00:00', 2)",
    # DDL
    "CREATE TABLE ddl (id INT PRIMARY KEY, v VARCHAR(10))",
    "INSERT INTO ddl VALUES (1, 'one')",
    "ALTER TABLE ddl ADD COLUMN w INT DEFAULT 5, MODIFY v VARCHAR(20) NOT NULL",
    "INSERT INTO ddl VALUES (2, 'two', 6)",
    "ALTER TABLE ddl DROP COLUMN w",
    "RENAME TABLE ddl TO ddl2",
    "INSERT INTO ddl2 VALUES (3, 'three')",
    "ALTER TABLE ddl2 RENAME TO ddl3",
    "TRUNCATE TABLE ddl3",
    "INSERT INTO ddl3 VALUES (4, 'four')",
    "DROP TABLE ddl3",
    "CREATE TABLE streamed_json (id INT PRIMARY KEY, doc JSON, pt POINT)",
    "INSERT INTO streamed_json VALUES (1, '{\"a\": 1}', ST_GeomFromText('POINT(3 4)'))",
    # primary-key updates, deletes and tombstones
    "CREATE TABLE pk (id INT, k2 VARCHAR(3), v INT, PRIMARY KEY (id, k2))",
    "INSERT INTO pk VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3)",
    "UPDATE pk SET id = id + 100 WHERE id IN (1, 2)",
    "UPDATE pk SET v = 33 WHERE id = 3",
    "DELETE FROM pk WHERE id = 101",
    # a key whose text needs escaping in the key headers (a quote and a backslash)
    "INSERT INTO pk VALUES (4, 'q\"\\\\', 4)",
    "UPDATE pk SET id = 104 WHERE id = 4",
    # a table without a primary key, and one whose name is not a valid topic name
    "CREATE TABLE nokey (a INT, b VARCHAR(5))",
    "INSERT INTO nokey VALUES (1, 'x'), (1, 'x')",
    "DELETE FROM nokey WHERE a = 1 LIMIT 1",
    "CREATE TABLE `odd$name` (id INT PRIMARY KEY)",
    "INSERT INTO `odd$name` VALUES (1)",
    # a multi-statement transaction over two tables
    ["INSERT INTO pk VALUES (7, 'g', 7)", "INSERT INTO nokey VALUES (9, 'n')",
     "UPDATE pk SET id = 8 WHERE id = 7", "INSERT INTO pk VALUES (9, 'i', 9)",
     "DELETE FROM pk WHERE id = 9"],
    # CREATE TABLE ... SELECT: under ROW one transaction, the CREATE (columns spelled out)
    # then its rows; one with the new table's own columns and key before the SELECT's
    "CREATE TABLE ctas AS SELECT id, k2, v FROM pk",
    ("CREATE TABLE ctas_cols (id INT PRIMARY KEY, note VARCHAR(5) DEFAULT 'n') "
     "SELECT id, v AS extra FROM pk WHERE v > 2"),
    "INSERT INTO ctas_cols (id, extra) VALUES (50, 5)",
    # more DDL shapes: table options, generated and auto-increment columns, defaults changed
    # alone, several tables dropped at once, a renamed column
    ("CREATE TABLE opts (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, "
     "name VARCHAR(10) CHARACTER SET latin1 NOT NULL DEFAULT 'n' COMMENT 'the name', "
     "twice INT AS (id * 2) VIRTUAL, z INT(5) UNSIGNED ZEROFILL, PRIMARY KEY (id)) "
     "DEFAULT CHARSET=latin1 COMMENT='options'"),
    "INSERT INTO opts (name, z) VALUES ('a', 7)",
    "ALTER TABLE opts ALTER COLUMN name SET DEFAULT 'm'",
    "INSERT INTO opts (z) VALUES (8)",
    "ALTER TABLE opts CHANGE COLUMN z zz INT UNSIGNED NOT NULL DEFAULT 3 FIRST",
    "INSERT INTO opts (name) VALUES ('c')",
    "CREATE TABLE drop1 (id INT PRIMARY KEY)",
    "CREATE TABLE drop2 (id INT PRIMARY KEY)",
    "DROP TABLE drop1, drop2",
    # a new primary key: the records after it are keyed on it
    "CREATE TABLE rekey (id INT NOT NULL, k2 VARCHAR(3) NOT NULL, v INT, PRIMARY KEY (id))",
    "INSERT INTO rekey VALUES (1, 'a', 1)",
    "ALTER TABLE rekey DROP PRIMARY KEY, ADD PRIMARY KEY (id, k2)",
    "INSERT INTO rekey VALUES (1, 'b', 2)",
    "UPDATE rekey SET v = 3 WHERE id = 1 AND k2 = 'b'",
]

# The last statements of every run: a connector has sent everything once it sent these.
DONE = ["CREATE TABLE done (id INT PRIMARY KEY)", "INSERT INTO done VALUES (1)"]

# Every type read by both snapshots as well: the same table and rows, created before start;
# and NULLs in columns with a DEFAULT.
SNAPSHOT_SETUP += [NULL_DEFAULTS.replace("null_defaults", "snap_nd"),
                   NULL_DEFAULTS_ROWS[0].replace("null_defaults", "snap_nd"),
                   ALL_TYPES.replace("CREATE TABLE alltypes", "CREATE TABLE snap_all"),
                   *(row.replace("INSERT INTO alltypes", "INSERT INTO snap_all")
                     for row in ALL_TYPES_ROWS if row.startswith("INSERT"))]
