"""ttlpred for Python: grid-job run-time prediction and safe TTLs, from pandas or NumPy.

Everything is computed by ttlpred's C++ libraries through the ``_core`` module (pybind11):
the same trace readers, trainer, evaluation protocol and inference engine as the ``ttlpred``
program, so the same model and trace give the same numbers in both. This file only moves
data between pandas/NumPy and those libraries (docs/python.md).

    import ttlpred
    jobs = ttlpred.read_trace("KTH-SP2.swf")            # a pandas DataFrame
    ttlpred.train(jobs, "kth.ttlp", split=0.8, epochs=10)
    model = ttlpred.Predictor("kth.ttlp")
    out = model.predict(jobs)                            # NumPy arrays
    print(ttlpred.evaluate(model, jobs)["kill_rate"])
"""
from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Optional

import numpy as np

from . import _core
from ._columns import table_to_frame, to_table

Error = _core.Error
Table = _core.Table
__version__ = _core.__version__
schema = _core.schema

__all__ = ["Error", "Table", "Predictor", "TTLRegressor", "read_trace", "read_parquet", "to_table", "train", "evaluate",
           "backtest", "simulate", "schema", "__version__"]


def read_trace(path: str, format: str = "auto", as_frame: bool = True):
    """Reads a trace file (ALICE CSV, SWF, GWF; plain or gzip) with the CLI's readers.

    Returns a pandas DataFrame (``as_frame=False``: a dict of NumPy arrays, no pandas needed)
    with one column per schema field that has a value; numbers are float64 with NaN for
    unknown, categories are Categoricals (object arrays with None). Rows the readers skip
    are counted in ``frame.attrs["read_report"]`` (the dict's "read_report" is not added).
    """
    table, report = _core.read_trace(str(path), format)
    if not as_frame:
        return table_to_frame(table, as_frame=False)
    frame = table_to_frame(table)
    frame.attrs["read_report"] = report
    return frame


def read_parquet(path: str, columns: Optional[Mapping[str, str]] = None):
    """A Parquet job table (as Spark/Hadoop clusters export them) as a DataFrame, through pyarrow.

    pyarrow is an optional extra (``pip install pyarrow``); ``columns`` renames the file's
    columns to schema fields and keeps only those. Raises ImportError naming pyarrow without it.
    """
    try:
        import pyarrow.parquet as pq
    except ImportError as e:
        raise ImportError("ttlpred.read_parquet needs pyarrow (an optional extra: pip install pyarrow)") from e
    names = list(columns) if columns else None
    frame = pq.read_table(str(path), columns=names).to_pandas()
    if columns:
        frame = frame.rename(columns=dict(columns))
    return frame


def _is_path(data: Any) -> bool:
    return isinstance(data, (str, bytes)) or hasattr(data, "__fspath__")


def _as_table(data: Any, columns: Optional[Mapping[str, str]] = None):
    if _is_path(data):
        return _core.read_trace(str(data), "auto")[0]
    return to_table(data, columns)


class Predictor:
    """A model file loaded for prediction, with the CLI's options (``ttlpred predict``).

    ``variant``: "auto" (the one the model was made for), "fp32", "fp32-fused", "fp16", "bf16",
    "int8-dynamic", "int8-static", "fp16-2:4", "int8-2:4". ``alpha``: the target kill rate
    of the safe TTL. ``max_ttl_s``/``min_seconds``: the bounds on every answer. A missing,
    truncated or foreign model file raises ``ttlpred.Error``.
    """

    def __init__(self, path: str, variant: str = "auto", isa: str = "", alpha: float = _core.DEFAULT_ALPHA,
                 max_ttl_s: float = _core.DEFAULT_MAX_TTL_S, min_seconds: float = _core.DEFAULT_MIN_SECONDS):
        self._options = dict(variant=variant, isa=isa, alpha=float(alpha), max_ttl_s=float(max_ttl_s),
                             min_seconds=float(min_seconds))
        self._core = _core.Predictor(str(path), **self._options)

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "<model bytes>", variant: str = "auto", isa: str = "",
                   alpha: float = _core.DEFAULT_ALPHA, max_ttl_s: float = _core.DEFAULT_MAX_TTL_S,
                   min_seconds: float = _core.DEFAULT_MIN_SECONDS) -> "Predictor":
        """A model file's bytes (``model_bytes()``, or a file read whole), loaded with the same
        options and checks as a path; ``name`` stands for the path in messages."""
        self = cls.__new__(cls)
        self._options = dict(variant=variant, isa=isa, alpha=float(alpha), max_ttl_s=float(max_ttl_s),
                             min_seconds=float(min_seconds))
        self._core = _core.Predictor.from_bytes(bytes(data), name=str(name), **self._options)
        return self

    def model_bytes(self) -> bytes:
        """The loaded model as a model file's bytes (``Predictor.from_bytes`` loads them back)."""
        return self._core.model_bytes()

    # Pickling keeps the model file's bytes and the options, so that joblib and
    # multiprocessing can carry a Predictor: it loads again as it was, on any host.
    def __getstate__(self) -> Dict[str, Any]:
        return {"model": self._core.model_bytes(), "path": self.path, "options": dict(self._options)}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self._options = dict(state["options"])
        self._core = _core.Predictor.from_bytes(state["model"], name=state["path"], **self._options)

    @property
    def path(self) -> str:
        return self._core.path

    def predict(self, data: Any, columns: Optional[Mapping[str, str]] = None,
                allow_schema_mismatch: bool = False) -> Dict[str, np.ndarray]:
        """Expected wall time and safe TTL (seconds) for every row, as ``ttlpred predict`` gives them.

        ``data``: a DataFrame or dict of arrays (``columns`` maps its names to schema
        fields), a ``Table``, or a trace file path. Jobs are answered in one batch inside the
        C++ engine with the GIL released. Returns ``{"expected_wall_s", "safe_ttl_s",
        "capped"}`` NumPy arrays in row order.

        A job's history features come from the model's stored history plus the jobs of
        ``data`` that ended before it, so a job after the training period gets the same answer
        alone or beside jobs that did not end before it; jobs of the training period, and a
        frame that begins with the model's training jobs, are replayed from the frame itself,
        as ``ttlpred eval`` scores them (docs/features.md, "History when predicting").
        """
        return self._core.predict(_as_table(data, columns), allow_schema_mismatch)

    def predict_job(self, job: Mapping[str, Any]) -> Dict[str, Any]:
        """One job, as a broker would ask the service: ``{field: value}`` (schema field names;
        None or NaN for unknown) -> ``{"expected_wall_s", "safe_ttl_s", "capped"}``.

        Its history features come from the model's own stored history (the outcomes up to the
        end of its training, as ``ttlpred serve`` starts from), never from other jobs passed
        before: the same job gets the same answer whenever it is asked. No table is built and
        no schema check runs, so it costs a few microseconds (docs/PERFORMANCE.md); for many
        jobs, or to replay their history from a trace, use ``predict``.
        """
        return self._core.predict_job(dict(job))

    def metadata(self) -> Dict[str, Any]:
        """The model file's metadata (training data hash, time, metrics, configuration,
        provenance) and the loaded variant, ISA and bounds."""
        meta = self._core.metadata()
        for key in ("metrics_json", "config_json"):
            text = meta.pop(key)
            meta[key[:-5]] = json.loads(text) if text else None
        return meta

    def __repr__(self) -> str:
        m = self._core.metadata()
        return f"Predictor({self.path!r}, variant={m['variant']!r}, alpha={m['alpha']})"


def train(data: Any, out: str, split: float = _core.DEFAULT_SPLIT, columns: Optional[Mapping[str, str]] = None,
          **options: Any) -> Dict[str, Any]:
    """``ttlpred train``: trains on the first ``split`` of the eligible jobs in submit order
    and writes the model file ``out``.

    ``options`` are the command's long options without dashes (``hidden="256,256,256"``,
    ``epochs=10``, ``lr=2e-3``, ``seed=1``, ``threads=0``, ``group_by="auto"``, ``quiet=False``
    ...); an unknown one raises ``ttlpred.Error``. Returns the training report.
    """
    return _core.train(_as_table(data, columns), str(out), float(split), options)


def evaluate(model: Any, data: Any, split: float = _core.DEFAULT_SPLIT, columns: Optional[Mapping[str, str]] = None,
             allow_overlap: bool = False, allow_schema_mismatch: bool = False,
             as_frame: bool = True, calibration: Optional[str] = None) -> Dict[str, Any]:
    """``ttlpred eval --json``: scores ``model`` (a Predictor or a model path) on the jobs after
    the chronological split, each safe TTL as ``serve`` answers it with the outcomes known at
    the job's submit (``calibration``: ``eval --calibration``'s names; None: its default).
    Returns the same keys as the CLI's JSON (``kill_rate``, ``rmse_hours``, ``groups`` ...)
    plus ``per_job``: the scored jobs' predictions and outcomes (a DataFrame, or a dict of
    arrays with ``as_frame=False``).
    """
    predictor = model if isinstance(model, Predictor) else Predictor(str(model))
    extra = () if calibration is None else (calibration,)
    text, per_job = _core.evaluate(predictor._core, _as_table(data, columns), float(split), allow_overlap,
                                   allow_schema_mismatch, *extra)
    result = json.loads(text)
    if as_frame:
        import pandas as pd
        per_job = pd.DataFrame(per_job)
    result["per_job"] = per_job
    return result


def _data_name(data: Any, table) -> str:
    """What the commands' JSON calls the trace: the path as given, as ``--data`` would be."""
    return str(data) if _is_path(data) else table.name


def backtest(data: Any, columns: Optional[Mapping[str, str]] = None, **options: Any) -> Dict[str, Any]:
    """``ttlpred backtest --json``: at each split point a model is trained from scratch and
    scores the jobs up to the next split, with every online calibration method.

    ``options`` are the command's long options without dashes, parsed by the command's own
    declaration (same defaults, same checks): ``splits=[0.5, 0.7, 0.9]`` (or "0.5,0.7,0.9"),
    ``alphas``, ``alpha``, ``methods``, ``method``, ``target_scale``, ``gamma``, ``log_step``, ``key``,
    ``window_days``, ``min_window_rows``, ``epochs``, ``seed``, ``max_ttl``, ``min_seconds``,
    ``out`` (a folder: report.html is written there). An unknown option raises
    ``ttlpred.Error``. Returns the command's JSON object as a dict (``"data"``: the path as
    given, or the table's name).
    """
    table = _as_table(data, columns)
    return json.loads(_core.backtest(table, _data_name(data, table), _options(options)))


def simulate(data: Any, columns: Optional[Mapping[str, str]] = None, **options: Any) -> Dict[str, Any]:
    """``ttlpred simulate --json``: a JAliEn-style broker or a batch scheduler replayed on the
    jobs after ``split`` with a TTL policy (docs/SIMULATION.md).

    ``options`` are the command's long options without dashes, parsed by the command's own
    declaration: ``scheduler`` ("jalien", "fcfs", "easy", "easy++"), ``ttl``, ``model`` (a
    model file path, or a Predictor: its path is used, loaded with this call's ``variant``,
    ``isa``, ``alpha``), ``split``, ``procs``, ``load``, ``pilot_gap``, ``proxy_lifetime``,
    ``max_retries``, ``default_ttl``, ``seed``, ``max_ttl``, ``min_seconds``, ``out`` (a
    folder: schedule.csv, timeseries.csv, report.html). A batch machine's size comes from
    ``procs`` or, for an SWF file path, its MaxProcs header. Returns the command's JSON
    object as a dict.
    """
    if isinstance(options.get("model"), Predictor):
        options["model"] = options["model"].path
    table = _as_table(data, columns)
    header = str(data) if _is_path(data) else ""
    return json.loads(_core.simulate(table, _data_name(data, table), header, _options(options)))


def _options(options: Mapping[str, Any]) -> Dict[str, Any]:
    """Paths as text; everything else as given (the C++ side checks it)."""
    return {k: (str(v) if hasattr(v, "__fspath__") else v) for k, v in options.items()}


from ._estimator import TTLRegressor  # noqa: E402  (it builds on Predictor and train above)
