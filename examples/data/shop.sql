-- A small shop, for the database-backed SQL Assistant (examples/sql-assistant-db.json) and
-- the tests of query_database: customers, products, and their orders. Written in SQL that
-- PostgreSQL and SQLite both read.

CREATE TABLE customers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    city TEXT NOT NULL,
    joined DATE NOT NULL
);

CREATE TABLE products (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    price NUMERIC(8, 2) NOT NULL
);

CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers (id),
    product_id INTEGER NOT NULL REFERENCES products (id),
    quantity INTEGER NOT NULL,
    ordered_on DATE NOT NULL
);

INSERT INTO customers (id, name, city, joined) VALUES
    (1, 'Ada Byron', 'London', '2024-02-11'),
    (2, 'Grace Hopper', 'New York', '2024-05-30'),
    (3, 'Linus Torvalds', 'Helsinki', '2025-01-07'),
    (4, 'Margaret Hamilton', 'Boston', '2025-03-19');

INSERT INTO products (id, name, price) VALUES
    (1, 'Mechanical keyboard', 129.00),
    (2, 'Trackball', 74.50),
    (3, 'Monitor arm', 59.90),
    (4, 'Desk lamp', 39.00);

INSERT INTO orders (id, customer_id, product_id, quantity, ordered_on) VALUES
    (1, 1, 1, 1, '2026-10-02'),
    (2, 1, 4, 2, '2026-10-02'),
    (3, 2, 2, 1, '2026-10-15'),
    (4, 3, 1, 3, '2026-11-01'),
    (5, 3, 3, 1, '2026-11-01'),
    (6, 4, 2, 2, '2026-11-20');
