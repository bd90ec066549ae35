# Type stubs of the public ttlpred API (docs/python.md).
from typing import Any, Dict, List, Mapping, Optional, Union
import os

import numpy as np
import numpy.typing as npt

from ._core import Error as Error, Table as Table

__version__: str
schema: List[Dict[str, str]]

JobData = Union["pandas.DataFrame", Mapping[str, Any], Table, str, os.PathLike]  # noqa: F821

def read_trace(path: Union[str, os.PathLike], format: str = ..., as_frame: bool = ...) -> Any: ...
def read_parquet(path: Union[str, os.PathLike], columns: Optional[Mapping[str, str]] = ...) -> Any: ...
def to_table(data: Any, columns: Optional[Mapping[str, str]] = ..., format: str = ..., name: str = ...) -> Table: ...

class Predictor:
    def __init__(self, path: Union[str, os.PathLike], variant: str = ..., isa: str = ..., alpha: float = ...,
                 max_ttl_s: float = ..., min_seconds: float = ...) -> None: ...
    @property
    def path(self) -> str: ...
    def predict(self, data: JobData, columns: Optional[Mapping[str, str]] = ...,
                allow_schema_mismatch: bool = ...) -> Dict[str, npt.NDArray[Any]]: ...
    def metadata(self) -> Dict[str, Any]: ...

def train(data: JobData, out: Union[str, os.PathLike], split: float = ..., columns: Optional[Mapping[str, str]] = ...,
          **options: Any) -> Dict[str, Any]: ...
def evaluate(model: Union[Predictor, str, os.PathLike], data: JobData, split: float = ...,
             columns: Optional[Mapping[str, str]] = ..., allow_overlap: bool = ..., allow_schema_mismatch: bool = ...,
             as_frame: bool = ...) -> Dict[str, Any]: ...
