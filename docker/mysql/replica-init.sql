-- Runs once, on the replica's first start (/docker-entrypoint-initdb.d), as root.
-- Forget any GTIDs this fresh server wrote itself, then follow the primary with
-- auto-positioning from its first transaction, so the users and sample data arrive.
RESET BINARY LOGS AND GTIDS;
CHANGE REPLICATION SOURCE TO
  SOURCE_HOST = 'primary',
  SOURCE_PORT = 3306,
  SOURCE_USER = 'repl',
  SOURCE_PASSWORD = 'repl-password',
  SOURCE_AUTO_POSITION = 1,
  GET_SOURCE_PUBLIC_KEY = 1,
  SOURCE_CONNECT_RETRY = 5;
START REPLICA;
-- super_read_only is set here, not on the command line: on the command line it would also
-- block the image's own first-start setup (root and user creation). PERSIST keeps it on
-- across restarts; replication threads are exempt.
SET PERSIST super_read_only = ON;
