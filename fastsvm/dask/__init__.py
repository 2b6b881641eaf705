"""fastsvm on a Dask cluster: the data stays in its partitions on the workers.

``pip install fastsvm[dask]`` installs what this needs (dask, distributed).
The estimators take the parameters of the local ones plus ``client`` (None:
the current default client, ``distributed.get_client()``), in the manner of
LightGBM's ``DaskLGBMClassifier`` and ``xgboost.dask``:

* :class:`DaskHuberSVC`: :class:`fastsvm.HuberSVC`'s L-BFGS or gradient descent, each
  worker summing the loss and gradient of its partitions with the margin
  bounds of its own rows;
* :class:`DaskBudgetSVC`: :class:`fastsvm.BudgetSVC`'s SGD, the model of at
  most ``budget`` support vectors travelling from partition to partition;
* :class:`DaskNystromSVC`: :class:`fastsvm.NystromSVC`'s landmarks and map,
  each partition embedded on its worker, the linear SVM solved there by the
  local dual coordinate descent, to the same certificate.

``fit(X, y, sample_weight=None)`` takes dask arrays and dask DataFrames /
Series (and NumPy or SciPy input for convenience); ``predict`` and
``decision_function`` on a dask collection return a dask array computed on
the workers; ``to_local()`` returns the ordinary fitted estimator, for
``save_model`` and the command line.
"""

from importlib.util import find_spec

if find_spec("dask") is None or find_spec("distributed") is None:  # pragma: no cover
    raise ImportError("fastsvm.dask needs dask and distributed: pip install 'fastsvm[dask]'")

from .budget import DaskBudgetSVC
from .huber import DaskHuberSVC
from .nystrom import DaskNystromSVC

__all__ = ["DaskBudgetSVC", "DaskHuberSVC", "DaskNystromSVC"]
