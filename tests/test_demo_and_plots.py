"""The main job (demo) and the plots run end to end."""

import re

from fastsvm import demo
from fastsvm.plotting import plot_merge_surfaces


def test_demo_reports_accuracy_and_time(capsys):
    assert demo.main(["--budget", "30", "--epochs", "1", "--components", "200",
                      "--margin-gamma", "0.002", "--no-svc"]) == 0
    out = capsys.readouterr().out
    for solver in ("fastsvm BudgetSVC", "fastsvm NystromSVC", "fastsvm HuberSVC",
                   "fastsvm MarginSGDSVC"):
        line = next(l for l in out.splitlines() if l.startswith(solver))
        accuracy = float(re.search(r"([\d.]+)%", line).group(1))
        assert accuracy > 80.0  # a9a, 1 epoch, budget 30; 200 landmarks
    assert "merges" in out and "Snacks: embedding 32,561 x" in out
    assert "the bounds spared computing" in out
    assert "MarginSGD: 4 passes (3 on halving subsets" in out     # 3 M values at a fixed gamma


def test_merge_surface_plot_is_written(tmp_path):
    fig = plot_merge_surfaces(tmp_path / "fig2.png")
    assert (tmp_path / "fig2.png").stat().st_size > 10_000
    assert len(fig.axes) == 2
