-- hr: departments and employees (manager_id: another employee; bonus NULL: none)
CREATE TABLE departments (dept_id INTEGER PRIMARY KEY, dept_name VARCHAR(40) NOT NULL,
    location VARCHAR(40) NOT NULL);
CREATE TABLE employees (emp_id INTEGER PRIMARY KEY, full_name VARCHAR(60) NOT NULL,
    dept_id INTEGER NOT NULL REFERENCES departments (dept_id), manager_id INTEGER,
    job_title VARCHAR(40) NOT NULL, salary INTEGER NOT NULL, hired_on DATE NOT NULL,
    bonus INTEGER);
INSERT INTO departments VALUES (10, 'Engineering', 'Berlin'), (20, 'Sales', 'Madrid'),
    (30, 'Support', 'Dublin'), (40, 'Finance', 'Berlin');
INSERT INTO employees VALUES
    (1, 'Alice Moreau', 10, NULL, 'CTO', 150000, '2019-03-01', 20000),
    (2, 'Bruno Costa', 10, 1, 'Engineer', 90000, '2021-06-15', NULL),
    (3, 'Carla Jensen', 10, 1, 'Engineer', 95000, '2022-01-10', 5000),
    (4, 'Daniel Wu', 20, 1, 'Sales Lead', 80000, '2020-09-01', 12000),
    (5, 'Elena Petrova', 20, 4, 'Account Manager', 60000, '2023-02-01', NULL),
    (6, 'Femi Adeyemi', 20, 4, 'Account Manager', 62000, '2023-07-19', 3000),
    (7, 'Greta Lind', 30, 1, 'Support Agent', 45000, '2022-11-30', NULL),
    (8, 'Hugo Blanc', 30, 7, 'Support Agent', 47000, '2024-01-08', 1000),
    (9, 'Ines Duarte', 10, 2, 'Engineer', 88000, '2024-04-01', NULL);
