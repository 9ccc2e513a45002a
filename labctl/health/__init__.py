"""`labctl health`: free disk, memory, pressure, swap and load, read-only."""
