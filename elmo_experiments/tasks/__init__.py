"""Per task: its dataset-level metric and its official scorer's file format."""
