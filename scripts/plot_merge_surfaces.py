"""Draw docs/merge_surfaces.png, the surfaces h(m, kappa) and WD(m, kappa) (the paper's Fig. 2).

Usage: python scripts/plot_merge_surfaces.py
"""

from pathlib import Path

from fastsvm.plotting import plot_merge_surfaces

if __name__ == "__main__":
    path = Path(__file__).resolve().parents[1] / "docs" / "merge_surfaces.png"
    plot_merge_surfaces(path)
    print(f"wrote {path}")
