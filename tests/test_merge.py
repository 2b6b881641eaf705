"""The merge problem: formulas against brute force, global maximiser, shipped table."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from fastsvm.merge import METHODS, solve
from fastsvm.merge.table import TABLE_SIZE, compute_tables, load_tables

from .naive import rbf, weight_degradation


def s_of(h, m, kappa):
    return m * kappa ** ((1 - h) ** 2) + (1 - m) * kappa ** (h ** 2)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_wd_matches_brute_force_degradation(method):
    """(alpha_a + alpha_b)^2 * wd equals ||alpha_a phi(a) + alpha_b phi(b) - alpha_z phi(z)||^2."""
    rng = np.random.default_rng(0)
    gamma = 0.7
    for _ in range(100):
        xa, xb = rng.normal(size=4), rng.normal(size=4)
        aa, ab = rng.uniform(0.1, 2, 2) * rng.choice([-1, 1])
        kappa = rbf(xa, xb, gamma)
        h, wd = solve(aa / (aa + ab), kappa, "gss-precise" if method == "lookup-wd" else method)
        z = h * xa + (1 - h) * xb
        alpha_z = aa * rbf(xa, z, gamma) + ab * rbf(xb, z, gamma)
        assert_allclose((aa + ab) ** 2 * wd, weight_degradation(xa, xb, z, aa, ab, alpha_z, gamma),
                        rtol=1e-9, atol=1e-12)


def test_h_is_the_global_maximiser_including_the_two_mode_region():
    ms = np.linspace(0, 1, 41)
    kappas = np.concatenate([np.geomspace(1e-8, np.exp(-2), 40), np.linspace(np.exp(-2), 1, 20)])
    M, Kp = np.meshgrid(ms, kappas, indexing="ij")
    h, _ = solve(M, Kp, "gss-precise")
    grid = np.linspace(0, 1, 100001)
    for m, kappa, hh in zip(M.ravel(), Kp.ravel(), h.ravel()):
        assert s_of(hh, m, kappa) >= s_of(grid, m, kappa).max() - 1e-12


def test_two_mode_region_picks_the_heavier_side():
    # kappa < e^-2: two modes; the point with the larger weight must win, on either side of m = 1/2
    h, _ = solve(np.array([0.4, 0.6]), 0.05, "gss-precise")
    assert h[0] < 0.1 and h[1] > 0.9
    h_gss, _ = solve(np.array([0.4, 0.6]), 0.05, "gss")
    assert h_gss[0] < 0.1 and h_gss[1] > 0.9


def test_negligible_weight_gives_the_other_point():
    """m = 0: z must be x_b (h -> 0) with no degradation, to the precision of the search."""
    kappa = np.array([0.0075, 0.3, 0.9])
    h, wd = solve(np.zeros(3), kappa, "gss-precise")
    assert np.all(h < 1e-7) and np.all(wd < 1e-15)  # h only to ~sqrt(eps / -log kappa)
    h, wd = solve(np.ones(3), kappa, "gss-precise")
    assert np.all(h > 1 - 1e-7) and np.all(wd < 1e-15)
    h, _ = solve(np.zeros(3), kappa, "gss")  # the reference GSS stops within its 0.01 bracket
    assert np.all((h > 0) & (h < 0.005))


def test_edge_cases_closed_form():
    h, wd = solve([0.3, 0.7, 0.3], [0.0, 0.0, 1.0], "gss-precise")
    assert_allclose(h, [0.0, 1.0, 0.3])
    assert_allclose(wd, [0.09, 0.09, 0.0], atol=1e-15)


def test_precision_of_gss_and_lookups_against_precise():
    rng = np.random.default_rng(1)
    m, kappa = rng.uniform(0, 1, 20000), rng.uniform(0, 1, 20000)
    _, wd_ref = solve(m, kappa, "gss-precise")
    errors = {meth: np.abs(solve(m, kappa, meth)[1] - wd_ref) for meth in ("gss", "lookup-h", "lookup-wd")}
    assert errors["gss"].max() < 1e-3
    assert errors["lookup-wd"].max() < 5e-3 and errors["lookup-wd"].mean() < 1e-5
    # lookup-h interpolates across the jump of h at m = 1/2, kappa < e^-2 (Lemma 1): large error there only
    away = np.abs(m - 0.5) > 0.01
    assert errors["lookup-h"][away].max() < 1e-3
    assert errors["lookup-h"].max() > 1e-2


def test_shipped_table_matches_fresh_solves():
    table_h, table_wd = load_tables()
    assert table_h.shape == table_wd.shape == (TABLE_SIZE, TABLE_SIZE)
    fresh_h, fresh_wd = compute_tables(TABLE_SIZE)
    assert_allclose(table_h, fresh_h, rtol=0, atol=1e-12)
    assert_allclose(table_wd, fresh_wd, rtol=0, atol=1e-12)
    # and grid points through the public API
    i, j = np.array([0, 57, 200, 399]), np.array([0, 13, 390, 399])
    h, wd = solve(i / (TABLE_SIZE - 1), j / (TABLE_SIZE - 1), "lookup-h")
    assert_allclose(h, table_h[i, j], atol=1e-12)


def test_lookup_is_exact_on_grid_points():
    table_h, table_wd = load_tables()
    i, j = np.meshgrid(np.arange(0, 400, 37), np.arange(0, 400, 41), indexing="ij")
    _, wd = solve(i / 399, j / 399, "lookup-wd")
    assert_allclose(wd, table_wd[i, j], atol=1e-14)


@pytest.mark.parametrize("bad", [dict(m=1.5, kappa=0.5), dict(m=0.5, kappa=-0.1), dict(m=np.nan, kappa=0.5)])
def test_solve_rejects_out_of_domain(bad):
    with pytest.raises(ValueError, match="m and kappa"):
        solve(**bad)


def test_solve_rejects_unknown_method():
    with pytest.raises(ValueError, match="method must be one of"):
        solve(0.5, 0.5, method="newton")


def test_solve_broadcasts():
    h, wd = solve(np.full((3, 1), 0.2), np.linspace(0.1, 0.9, 4))
    assert h.shape == wd.shape == (3, 4)
