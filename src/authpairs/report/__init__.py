"""Reports: terminal tables and JSON/CSV files."""
