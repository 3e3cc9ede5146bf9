-- Runs once, on the replica's first start (/docker-entrypoint-initdb.d), as root.
-- Forget anything this fresh server binlogged itself, then follow the primary with GTIDs
-- from the start of its binlog (empty slave_pos), so the users and sample data arrive.
RESET MASTER;
SET GLOBAL gtid_slave_pos = '';
CHANGE MASTER TO
  MASTER_HOST = 'primary',
  MASTER_PORT = 3306,
  MASTER_USER = 'repl',
  MASTER_PASSWORD = 'repl-password',
  MASTER_CONNECT_RETRY = 5,
  MASTER_USE_GTID = slave_pos;
START SLAVE;
