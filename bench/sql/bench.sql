-- bench/sql/bench.sql - CPU-bound SQLite workload for the dbtprof benchmark.
--
-- Usage: sqlite3 :memory: '.parameter set @n 200000' '.read bench/sql/bench.sql'
-- @n is the number of order rows (200000 full, 20000 small).  Every value is
-- derived arithmetically from row numbers (no random()), so the output is
-- deterministic and identical natively and under emulation.

PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
PRAGMA cache_size = -65536;

CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT, region INTEGER, tier TEXT);
CREATE TABLE product (id INTEGER PRIMARY KEY, title TEXT, category INTEGER, price REAL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, product_id INTEGER,
                     qty INTEGER, day INTEGER, note TEXT);

WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < @n / 10)
INSERT INTO customer
SELECT i, printf('cust-%06d-%s', i, substr('abcdefghijklmnopqrstuvwxyz', 1 + (i * 7) % 26, 3)),
       (i * 31 + 7) % 50,
       CASE (i * 13) % 7 WHEN 0 THEN 'gold' WHEN 1 THEN 'silver' WHEN 2 THEN 'silver' ELSE 'bronze' END
FROM c;

WITH RECURSIVE p(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM p WHERE i < 2000)
INSERT INTO product
SELECT i, printf('product %d %s', i, hex(i * 2654435761 % 4294967296)), (i * 17) % 40,
       round(((i * 7919) % 10007) / 37.0 + 1.0, 2)
FROM p;

WITH RECURSIVE o(i, h) AS (
  SELECT 1, 12345
  UNION ALL
  SELECT i + 1, (h * 1103515245 + 12345) % 2147483648 FROM o WHERE i < @n)
INSERT INTO orders
SELECT i, 1 + h % (@n / 10), 1 + (h / 7) % 2000, 1 + (h / 13) % 9, (h / 101) % 365,
       CASE WHEN h % 5 = 0 THEN 'rush ' || (h % 1000) ELSE 'std' END
FROM o;

CREATE INDEX orders_customer ON orders(customer_id);
CREATE INDEX orders_product ON orders(product_id, day);
CREATE INDEX customer_region ON customer(region, tier);

SELECT 'rows', (SELECT count(*) FROM customer), (SELECT count(*) FROM product),
       (SELECT count(*) FROM orders);

-- Revenue per region and tier (three-way join + group by).
SELECT 'region', c.region, c.tier, count(*), round(sum(o.qty * p.price), 2)
FROM orders o JOIN customer c ON c.id = o.customer_id
              JOIN product p ON p.id = o.product_id
GROUP BY c.region, c.tier
ORDER BY sum(o.qty * p.price) DESC
LIMIT 8;

-- Top products per category with a window function.
SELECT 'topcat', category, id, revenue FROM (
  SELECT p.category, p.id, round(sum(o.qty * p.price), 2) AS revenue,
         row_number() OVER (PARTITION BY p.category ORDER BY sum(o.qty * p.price) DESC, p.id) AS rn
  FROM orders o JOIN product p ON p.id = o.product_id
  GROUP BY p.id)
WHERE rn = 1 ORDER BY category LIMIT 10;

-- Correlated subquery through an index; string predicates.
SELECT 'busy', count(*), sum(n) FROM (
  SELECT c.id, (SELECT count(*) FROM orders o WHERE o.customer_id = c.id AND o.note LIKE 'rush%') AS n
  FROM customer c WHERE c.tier = 'gold')
WHERE n > 0;

-- Daily series with a running total.
SELECT 'daily', max(running), count(*) FROM (
  SELECT day, sum(sum(qty)) OVER (ORDER BY day) AS running FROM orders GROUP BY day);

-- Mutations: update through a join-like subquery, delete, re-aggregate.
UPDATE orders SET qty = qty + 1
WHERE product_id IN (SELECT id FROM product WHERE category < 5);
DELETE FROM orders WHERE day % 17 = 3;
SELECT 'after', count(*), sum(qty), count(DISTINCT customer_id) FROM orders;

-- Self-join on a range, distinct and string aggregation.
SELECT 'pairs', count(*) FROM orders a JOIN orders b
  ON b.customer_id = a.customer_id AND b.day BETWEEN a.day + 1 AND a.day + 3
WHERE a.id % 4 = 0;
SELECT 'names', length(group_concat(name, ',')), count(DISTINCT substr(name, 13))
FROM (SELECT name FROM customer WHERE region = 7 ORDER BY name DESC);
