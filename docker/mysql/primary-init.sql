-- Runs once, on the primary's first start (/docker-entrypoint-initdb.d), as root.
-- Everything here is binlogged (with GTIDs), so the replica receives it too.

-- The replica's replication account.
CREATE USER IF NOT EXISTS 'repl'@'%' IDENTIFIED BY 'repl-password';
GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%';

-- The connector's account: read-only, used on the replica only. MySQL 8.4 defaults to
-- caching_sha2_password, so connector.json uses database.ssl.mode=required (the server's
-- auto-generated certificate) instead of RSA key exchange.
CREATE USER IF NOT EXISTS 'cdc'@'%' IDENTIFIED BY 'cdc-password';
GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'cdc'@'%';

-- Sample data for the README's walk-through.
CREATE DATABASE IF NOT EXISTS shop;
CREATE TABLE IF NOT EXISTS shop.orders (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  customer VARCHAR(64) NOT NULL,
  amount DECIMAL(10, 2) NOT NULL,
  status ENUM('new', 'paid', 'shipped') NOT NULL DEFAULT 'new',
  created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
);
INSERT INTO shop.orders (customer, amount, status) VALUES
  ('ada', 12.50, 'paid'),
  ('grace', 99.99, 'new'),
  ('linus', 5.00, 'shipped');
