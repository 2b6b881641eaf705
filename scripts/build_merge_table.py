"""Regenerate fastsvm/merge/merge_table.npz (400 x 400, precise GSS).

Usage: python scripts/build_merge_table.py
"""

from pathlib import Path

from fastsvm.merge.table import TABLE_FILE, TABLE_SIZE, write_tables

if __name__ == "__main__":
    path = Path(__file__).resolve().parents[1] / "fastsvm" / "merge" / TABLE_FILE
    write_tables(path, TABLE_SIZE)
    print(f"wrote {path} ({TABLE_SIZE} x {TABLE_SIZE})")
