-- fleet: drivers, vehicles (seats) and trips (distance, fuel, passengers)
CREATE TABLE drivers (driver_id INTEGER PRIMARY KEY, name VARCHAR(60) NOT NULL,
    license_class VARCHAR(2) NOT NULL);
CREATE TABLE vehicles (vehicle_id INTEGER PRIMARY KEY, plate VARCHAR(12) NOT NULL,
    model VARCHAR(30) NOT NULL, seats INTEGER NOT NULL);
CREATE TABLE trips (trip_id INTEGER PRIMARY KEY,
    vehicle_id INTEGER NOT NULL REFERENCES vehicles (vehicle_id),
    driver_id INTEGER NOT NULL REFERENCES drivers (driver_id), trip_date DATE NOT NULL,
    distance_km INTEGER NOT NULL, fuel_liters DECIMAL(6, 2) NOT NULL, passengers INTEGER NOT NULL);
INSERT INTO drivers VALUES (1, 'Kofi Mensah', 'B'), (2, 'Lena Vogel', 'D'), (3, 'Marco Bianchi', 'B'),
    (4, 'Nadia Karim', 'D');
INSERT INTO vehicles VALUES (1, 'AB-123-CD', 'Transit', 9), (2, 'EF-456-GH', 'Sprinter', 16),
    (3, 'IJ-789-KL', 'Corolla', 4);
INSERT INTO trips VALUES (1, 1, 1, '2024-06-01', 120, 11.50, 5), (2, 2, 2, '2024-06-01', 340, 38.00, 14),
    (3, 3, 3, '2024-06-02', 45, 3.20, 2), (4, 1, 1, '2024-06-03', 80, 7.90, 7),
    (5, 2, 4, '2024-06-03', 410, 45.50, 16), (6, 3, 3, '2024-06-04', 60, 4.10, 1),
    (7, 2, 2, '2024-06-05', 200, 23.00, 10), (8, 1, 4, '2024-06-05', 150, 14.00, 9);
