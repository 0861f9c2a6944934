-- shop: customers, products, orders and their items (portable: SQLite, DuckDB, PostgreSQL)
CREATE TABLE customers (id INTEGER PRIMARY KEY, name VARCHAR(60) NOT NULL, city VARCHAR(60),
    signup_date DATE NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name VARCHAR(60) NOT NULL,
    category VARCHAR(30) NOT NULL, price DECIMAL(10, 2) NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers (id),
    order_date DATE NOT NULL, status VARCHAR(20) NOT NULL, coupon VARCHAR(20));
CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders (id),
    product_id INTEGER NOT NULL REFERENCES products (id), quantity INTEGER NOT NULL);
INSERT INTO customers VALUES (1, 'Ana Silva', 'Lisbon', '2024-01-10'),
    (2, 'Ben Okafor', 'Lagos', '2024-02-02'), (3, 'Chloe Martin', 'Paris', '2024-02-15'),
    (4, 'Dev Patel', 'London', '2024-03-01'), (5, 'Eva Novak', NULL, '2024-03-20'),
    (6, 'Farid Haddad', 'Paris', '2024-04-04');
INSERT INTO products VALUES (1, 'Desk lamp', 'home', 24.90), (2, 'Office chair', 'furniture', 149.00),
    (3, 'Notebook', 'stationery', 3.50), (4, 'Standing desk', 'furniture', 399.00),
    (5, 'Pen set', 'stationery', 7.25), (6, 'Bookshelf', 'furniture', 89.99);
INSERT INTO orders VALUES (1, 1, '2024-04-01', 'shipped', NULL),
    (2, 1, '2024-04-15', 'shipped', 'SPRING10'), (3, 2, '2024-04-20', 'cancelled', NULL),
    (4, 3, '2024-05-02', 'shipped', NULL), (5, 3, '2024-05-03', 'pending', 'SPRING10'),
    (6, 4, '2024-05-10', 'shipped', NULL), (7, 6, '2024-05-18', 'pending', NULL),
    (8, 1, '2024-06-01', 'shipped', NULL);
INSERT INTO order_items VALUES (1, 1, 2), (1, 3, 10), (2, 2, 1), (3, 4, 1), (4, 3, 5), (4, 5, 2),
    (5, 6, 1), (6, 2, 2), (6, 1, 1), (7, 5, 3), (8, 3, 4);
