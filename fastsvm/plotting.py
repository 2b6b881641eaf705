"""Plots (matplotlib is an optional dependency: ``pip install fastsvm[plot]``)."""

import numpy as np

from .merge import load_tables


def _pyplot():
    try:
        import matplotlib
    except ImportError as err:  # pragma: no cover - depends on the installation
        raise ImportError("plotting needs matplotlib: pip install 'fastsvm[plot]'") from err
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def plot_merge_surfaces(path=None):
    """The surfaces h(m, kappa) and WD(m, kappa) of the lookup table (the paper's Fig. 2).

    WD is drawn on a log scale, as in the paper.  Returns the figure; saves
    it to ``path`` when given.
    """
    plt = _pyplot()
    table_h, table_wd = load_tables()
    grid = np.linspace(0, 1, table_h.shape[0])
    M, Kp = np.meshgrid(grid, grid, indexing="ij")
    step = 4  # draw every 4th grid line: 100 x 100 facets
    fig = plt.figure(figsize=(11, 4.8))
    for i, (values, title) in enumerate([(table_h, "h(m, kappa)"),
                                         (np.log10(np.maximum(table_wd, 1e-12)), "log10 WD(m, kappa)")]):
        ax = fig.add_subplot(1, 2, i + 1, projection="3d")
        ax.plot_surface(M[::step, ::step], Kp[::step, ::step], values[::step, ::step],
                        cmap="viridis", linewidth=0, antialiased=True)
        ax.set_xlabel("m")
        ax.set_ylabel("kappa")
        ax.set_title(title)
        ax.view_init(elev=25, azim=-125)
    fig.suptitle("Merge problem solved on the 400 x 400 grid (GSS to 1e-10, global maximiser)")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig
