-- school: teachers, students, courses, enrollments (grade 0-100; NULL: not graded yet)
CREATE TABLE teachers (teacher_id INTEGER PRIMARY KEY, name VARCHAR(60) NOT NULL,
    dept VARCHAR(30) NOT NULL);
CREATE TABLE students (student_id INTEGER PRIMARY KEY, first_name VARCHAR(40) NOT NULL,
    last_name VARCHAR(40) NOT NULL, enrollment_year INTEGER NOT NULL,
    advisor_id INTEGER REFERENCES teachers (teacher_id));
CREATE TABLE courses (course_id INTEGER PRIMARY KEY, title VARCHAR(60) NOT NULL,
    dept VARCHAR(30) NOT NULL, credits INTEGER NOT NULL,
    teacher_id INTEGER REFERENCES teachers (teacher_id));
CREATE TABLE enrollments (student_id INTEGER NOT NULL REFERENCES students (student_id),
    course_id INTEGER NOT NULL REFERENCES courses (course_id), term VARCHAR(20) NOT NULL,
    grade INTEGER);
INSERT INTO teachers VALUES (1, 'Dr. Ruiz', 'math'), (2, 'Dr. Chen', 'physics'),
    (3, 'Ms. Adams', 'history');
INSERT INTO students VALUES (101, 'Liam', 'Brown', 2022, 1), (102, 'Mia', 'Garcia', 2023, 2),
    (103, 'Noah', 'Kim', 2023, 1), (104, 'Olivia', 'Rossi', 2024, 3),
    (105, 'Pablo', 'Diaz', 2024, NULL);
INSERT INTO courses VALUES (1, 'Calculus I', 'math', 5, 1), (2, 'Linear Algebra', 'math', 5, 1),
    (3, 'Mechanics', 'physics', 6, 2), (4, 'Modern History', 'history', 4, 3),
    (5, 'Statistics', 'math', 4, NULL);
INSERT INTO enrollments VALUES (101, 1, '2023-fall', 88), (101, 2, '2024-spring', 92),
    (102, 1, '2023-fall', 75), (102, 3, '2024-spring', NULL), (103, 1, '2024-spring', 64),
    (103, 4, '2024-spring', 81), (104, 4, '2024-fall', NULL), (104, 5, '2024-fall', 95),
    (105, 3, '2024-fall', 70), (105, 1, '2024-spring', 58);
