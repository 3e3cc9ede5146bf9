"""One conformance run with the record-changing settings Debezium users rely on, all at once.

Debezium and gtidmark get the same settings (SETTINGS) on dedicated tables: masks, hashes
(v1, v2), truncation, source-type propagation by column and by type, a column include
list, a message key and skipped deletes. The flavour does not change any of it: MariaDB
only (the `dbz_mariadb` replica, Debezium's blocking initial snapshot).
"""

from __future__ import annotations

from tests.conformance.runs import Target

DB = "confcol"
SALT = "CzQMA0cB5K"

SETTINGS = {
    "column.mask.with.12.chars": rf"{DB}\.people\.(email|status|score)",
    # alias: a VARCHAR, so datatype.propagate (an earlier family) takes it, not the hash
    f"column.mask.hash.SHA-256.with.salt.{SALT}": rf"{DB}\.people\.(name|alias)",
    f"column.mask.hash.v2.SHA-256.with.salt.{SALT}": rf"{DB}\.people\.nick",
    "column.truncate.to.20.chars": rf"{DB}\.people\.(bio|code|photo)",
    "column.propagate.source.type": rf"{DB}\.(items|gauges)\..*",
    "datatype.propagate.source.type": r".+\.VARCHAR",
    "column.include.list": (rf"{DB}\.people\.(?!secret).*,{DB}\.items\..*,"
                            rf"{DB}\.gauges\..*,{DB}\.done\..*"),
    "message.key.columns": f"{DB}.items:sku,id",
    "skipped.operations": "d",
}

PEOPLE = """CREATE TABLE people (
    id INT PRIMARY KEY, email VARCHAR(40), name CHAR(60) NOT NULL, nick CHAR(10),
    alias VARCHAR(30),
    bio TEXT, code VARCHAR(8), photo BLOB, status ENUM('new','old'), score INT,
    secret VARCHAR(30), region VARCHAR(20) DEFAULT 'eu')"""
ITEMS = """CREATE TABLE items (
    id INT PRIMARY KEY, sku VARCHAR(16) NOT NULL, price DECIMAL(8,3), qty SMALLINT UNSIGNED,
    made DATETIME(3), kinds SET('a','b','c'), note TEXT, flag TINYINT(1))"""
# Created while both stream: Debezium takes lengths from this DDL as written (BIGINT: none).
GAUGES = """CREATE TABLE gauges (id INT PRIMARY KEY, small TINYINT(1),
    wide INT(5) UNSIGNED ZEROFILL, bare BIGINT, d DOUBLE(10,4), flag BOOLEAN)"""

SETUP = [
    PEOPLE, ITEMS,
    """INSERT INTO people VALUES
        (1, 'ann@example.com', 'Ann Smith', 'annie', 'a1', CONCAT('😀', REPEAT('x', 25)),
         'C1', REPEAT('b', 30), 'new', 7, 'hunter2', 'us'),
        (2, NULL, 'Zoë 😀', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, DEFAULT)""",
    """INSERT INTO items VALUES
        (1, 'SKU-1', 12.5, 3, '2024-01-02 03:04:05.678', 'a,c', 'first', 1),
        (2, 'SKU-2', NULL, NULL, NULL, '', NULL, NULL)""",
]

STREAMING = [
    """INSERT INTO people VALUES (3, 'bo@example.com', 'Bo', 'bobo', 'b', REPEAT('y', 40),
        'LONGCODE', X'00FF', 'old', -1, 's3cret', 'apac')""",
    "UPDATE people SET email = 'ann@new.example', bio = 'short', score = 8 WHERE id = 1",
    "DELETE FROM people WHERE id = 2",
    ["INSERT INTO items VALUES (3, 'SKU-3', 1.001, 65535, NOW(3), 'b', 'third', 0)",
     "UPDATE items SET price = 99.999 WHERE id = 1",
     "DELETE FROM items WHERE id = 2"],
    "UPDATE items SET sku = 'SKU-3B' WHERE id = 3",  # the message key changes: d, c
    "DELETE FROM items WHERE id = 3",  # skipped: nothing, and no transaction either
    GAUGES,
    "INSERT INTO gauges VALUES (1, 1, 42, -7, 3.1416, TRUE)",
    "CREATE TABLE done (id INT PRIMARY KEY)",
    "INSERT INTO done VALUES (1)",
]


def column_settings_target() -> Target:
    return Target("mariadb", DB, SETUP, STREAMING, [(["people", "items"], None)],
                  {"snapshot.mode": "initial"}, both=SETTINGS)
