"""Framework-free helpers: environment parsing, text utilities."""
