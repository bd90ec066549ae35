"""Job data from where users keep it into the C++ job table, and back.

Why this module exists: the C++ library reads trace files itself, but grid and HPC centres
export job tables from Slurm ``sacct``, PBS accounting or a database, which reach Python as a
pandas DataFrame (or a dict of NumPy arrays). This module only *reshapes* such columns for
``_core.Table.from_columns`` (numbers as float64, categories as integer codes plus their
string values, without a per-row Python loop); the C++ side checks every value and refuses a
bad column with the field's name, and builds, a column at a time, the same table
the readers' row-by-row code would build from these values.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np

from . import _core

_FIELDS = {f["name"]: f for f in _core.schema}


def _is_frame(data: Any) -> bool:
    return hasattr(data, "columns") and hasattr(data, "iloc")


def _numbers(name: str, values: Any) -> np.ndarray:
    """float64 with NaN for unknown; datetimes become Unix seconds, durations seconds."""
    dtype = getattr(values, "dtype", None)
    kind = getattr(dtype, "kind", None)
    if kind == "M":  # datetime64: a submit time as sacct's Submit column gives it
        arr = np.asarray(values, dtype="datetime64[ns]")
        out = arr.astype("int64").astype("float64") / 1e9
        out[np.isnat(arr)] = np.nan
        return out
    if kind == "m":  # timedelta64: an elapsed or time-limit column
        arr = np.asarray(values, dtype="timedelta64[ns]")
        out = arr.astype("int64").astype("float64") / 1e9
        out[np.isnat(arr)] = np.nan
        return out
    if hasattr(values, "to_numpy") and kind in ("i", "u", "f", "b") and str(dtype)[0].isupper():
        # pandas' nullable Int64/Float64/boolean: <NA> is unknown
        return values.to_numpy(dtype="float64", na_value=np.nan)
    arr = np.asarray(values)
    if arr.dtype.kind in ("i", "u", "f", "b"):
        return np.ascontiguousarray(arr, dtype="float64")
    return arr  # left as is: the C++ side names the field and the dtype it refuses


def _categories(name: str, values: Any) -> tuple:
    """(int64 codes with -1 for unknown, list of str values), via pandas when present."""
    if isinstance(values, tuple) and len(values) == 2:
        return values
    try:
        import pandas as pd
    except ImportError:  # NumPy only: factorize with np.unique
        arr = np.asarray(values, dtype=object)
        known = np.array([v is not None and v == v and v != "" for v in arr], dtype=bool)
        uniques, inverse = np.unique(arr[known].astype(str), return_inverse=True)
        codes = np.full(len(arr), -1, dtype=np.int64)
        codes[known] = inverse
        return codes, [str(u) for u in uniques]
    if isinstance(getattr(values, "dtype", None), pd.CategoricalDtype):
        cat = values.array if hasattr(values, "array") else values
        codes, uniques = np.asarray(cat.codes, dtype=np.int64), list(cat.categories)
    else:
        codes, uniques = pd.factorize(pd.Series(values), use_na_sentinel=True)
        codes = np.asarray(codes, dtype=np.int64)
    uniques = np.asarray(uniques)
    if uniques.dtype.kind == "f" and np.all(np.mod(uniques, 1) == 0):
        # ids read by pandas as floats (an integer column with a gap): "12", as the readers write it
        uniques = uniques.astype(np.int64)
    strings = [str(u) for u in uniques]
    if "" in strings:  # an empty string is "unknown" in every trace format
        empty = strings.index("")
        codes = np.where(codes == empty, -1, codes)
    return codes, strings


def to_table(data: Any, columns: Optional[Mapping[str, str]] = None, format: str = "", name: str = "<columns>"):
    """A ``_core.Table`` from a DataFrame, a dict of arrays, or a Table (returned as is).

    ``columns`` maps the data's column names to schema field names (``{"Elapsed": "wall_s"}``);
    with a mapping only the mapped columns are used. Without one every column must be named
    after a schema field. Mistakes raise ``ttlpred.Error`` naming the column or field.
    """
    if isinstance(data, _core.Table):
        if columns:
            raise _core.Error("columns= applies to a DataFrame or dict of arrays, not to a Table")
        return data
    if _is_frame(data):
        format = format or data.attrs.get("ttlpred_format", "")
        source = {str(c): data[c] for c in data.columns}
    elif isinstance(data, Mapping):
        source = {str(k): v for k, v in data.items()}
    else:
        raise _core.Error(f"expected a pandas DataFrame, a dict of arrays or a ttlpred Table, got {type(data).__name__}")
    if columns is None:
        unknown = [c for c in source if c not in _FIELDS]
        if unknown:
            raise _core.Error(
                f"columns {unknown} are not fields of the job schema; name them with columns={{'your column': 'field'}} "
                f"(fields: {', '.join(_FIELDS)})")
        mapping = {c: c for c in source}
    else:
        mapping = dict(columns)
        missing = [c for c in mapping if c not in source]
        if missing:
            raise _core.Error(f"columns {missing} named in columns= are not in the data (it has {list(source)})")
        targets = list(mapping.values())
        unknown = [t for t in targets if t not in _FIELDS]
        if unknown:
            raise _core.Error(f"fields {unknown} named in columns= are not fields of the job schema "
                              f"(fields: {', '.join(_FIELDS)})")
        twice = sorted({t for t in targets if targets.count(t) > 1})
        if twice:
            raise _core.Error(f"fields {twice} are each mapped from more than one column")
    out = {}
    for src, field in mapping.items():
        values = source[src]
        if _FIELDS[field]["kind"] == "number":
            out[field] = _numbers(field, values)
        else:
            out[field] = _categories(field, values)
    return _core.Table.from_columns(out, format, name)


def table_to_frame(table, as_frame: bool = True):
    """The table's columns as a DataFrame (categories as pandas Categoricals) or a dict of NumPy arrays."""
    cols = table.columns()
    if as_frame:
        import pandas as pd
        data = {}
        for name, col in cols.items():
            if isinstance(col, tuple):
                codes, values = col
                data[name] = pd.Categorical.from_codes(codes, categories=pd.Index(values, dtype=object)) \
                    if len(set(values)) == len(values) else pd.Categorical(np.asarray(values, dtype=object)[codes])
            else:
                data[name] = col
        frame = pd.DataFrame(data)
        frame.attrs["ttlpred_format"] = table.format
        return frame
    out = {}
    for name, col in cols.items():
        if isinstance(col, tuple):
            codes, values = col
            strings = np.asarray(values + [None], dtype=object)
            out[name] = strings[codes]  # code -1 picks the trailing None: unknown
        else:
            out[name] = col
    return out
