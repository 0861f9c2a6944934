-- library: authors, books, members, loans (returned_on NULL: the book is still out)
CREATE TABLE authors (author_id INTEGER PRIMARY KEY, name VARCHAR(60) NOT NULL,
    country VARCHAR(40) NOT NULL);
CREATE TABLE books (book_id INTEGER PRIMARY KEY, title VARCHAR(80) NOT NULL,
    author_id INTEGER NOT NULL REFERENCES authors (author_id), published_year INTEGER NOT NULL,
    pages INTEGER NOT NULL);
CREATE TABLE members (member_id INTEGER PRIMARY KEY, name VARCHAR(60) NOT NULL,
    joined_on DATE NOT NULL);
CREATE TABLE loans (loan_id INTEGER PRIMARY KEY, book_id INTEGER NOT NULL REFERENCES books (book_id),
    member_id INTEGER NOT NULL REFERENCES members (member_id), loaned_on DATE NOT NULL,
    returned_on DATE);
INSERT INTO authors VALUES (1, 'Chinua Achebe', 'Nigeria'), (2, 'Jane Austen', 'United Kingdom'),
    (3, 'Gabriel Garcia Marquez', 'Colombia'), (4, 'Haruki Murakami', 'Japan');
INSERT INTO books VALUES (1, 'Things Fall Apart', 1, 1958, 209),
    (2, 'Pride and Prejudice', 2, 1813, 432), (3, 'Emma', 2, 1815, 474),
    (4, 'One Hundred Years of Solitude', 3, 1967, 417), (5, 'Norwegian Wood', 4, 1987, 296),
    (6, 'Kafka on the Shore', 4, 2002, 505), (7, 'Arrow of God', 1, 1964, 287);
INSERT INTO members VALUES (1, 'Sam Lee', '2023-09-01'), (2, 'Rita Gomez', '2024-01-15'),
    (3, 'Tom Weber', '2024-02-20'), (4, 'Uma Rao', '2024-05-05');
INSERT INTO loans VALUES (1, 2, 1, '2024-03-01', '2024-03-15'), (2, 5, 1, '2024-03-20', NULL),
    (3, 1, 2, '2024-03-05', '2024-03-25'), (4, 2, 3, '2024-04-02', '2024-04-20'),
    (5, 6, 2, '2024-04-10', NULL), (6, 4, 3, '2024-04-12', '2024-05-01'),
    (7, 2, 4, '2024-05-10', NULL), (8, 3, 1, '2024-05-11', '2024-05-30');
