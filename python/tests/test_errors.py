"""Bad input gets a Python exception naming what is wrong, never a crash: column mappings,
dtypes, infinities, and model files that are missing, truncated or not model files."""
import numpy as np
import pandas as pd
import pytest

import ttlpred


def small_frame():
    return pd.DataFrame({"submit_time": [1.0, 2.0], "user": ["a", "b"], "wall_s": [100.0, 200.0]})


def test_error_is_a_value_error():
    assert issubclass(ttlpred.Error, ValueError)


def test_unknown_column_without_mapping(alice_model):
    frame = small_frame().rename(columns={"wall_s": "Elapsed"})
    with pytest.raises(ttlpred.Error, match="Elapsed"):
        ttlpred.Predictor(alice_model).predict(frame)


def test_mapping_names_a_missing_column(alice_model):
    with pytest.raises(ttlpred.Error, match="'Submit'"):
        ttlpred.Predictor(alice_model).predict(small_frame(), columns={"Submit": "submit_time"})


def test_mapping_to_a_field_that_does_not_exist():
    with pytest.raises(ttlpred.Error, match="walltime"):
        ttlpred.to_table(small_frame(), columns={"wall_s": "walltime"})


def test_two_columns_mapped_to_one_field():
    frame = small_frame().assign(other=[1.0, 2.0])
    with pytest.raises(ttlpred.Error, match="wall_s"):
        ttlpred.to_table(frame, columns={"wall_s": "wall_s", "other": "wall_s"})


def test_text_in_a_number_field_names_the_field():
    frame = small_frame().assign(cpu_cores=["four", "eight"])
    with pytest.raises(ttlpred.Error, match="cpu_cores.*object"):
        ttlpred.to_table(frame)


def test_infinite_number_names_field_and_row():
    frame = small_frame()
    frame.loc[1, "wall_s"] = np.inf
    with pytest.raises(ttlpred.Error, match="wall_s.*row 1"):
        ttlpred.to_table(frame)


def test_negative_number_names_field_and_row():
    frame = small_frame()
    frame.loc[1, "cpu_cores"] = -4
    with pytest.raises(ttlpred.Error, match=r"cpu_cores.*row 1 is negative \(-4\)"):
        ttlpred.to_table(frame)


def test_an_empty_frame_gets_empty_answers(alice_model, alice_csv):
    out = ttlpred.Predictor(alice_model).predict(pd.read_csv(alice_csv).iloc[0:0])
    assert set(out) == {"expected_wall_s", "safe_ttl_s", "capped"}
    assert all(len(v) == 0 for v in out.values())


def test_nan_is_unknown_not_an_error():
    frame = small_frame()
    frame.loc[0, "wall_s"] = np.nan
    frame.loc[1, "user"] = None
    table = ttlpred.to_table(frame)
    cols = table.columns()
    assert np.isnan(cols["wall_s"][0]) and cols["wall_s"][1] == 200.0
    codes, values = cols["user"]
    assert list(codes) == [0, -1] and values == ["a"]


def test_rows_of_unequal_length():
    with pytest.raises(ttlpred.Error, match="rows"):
        ttlpred.to_table({"wall_s": np.array([1.0, 2.0]), "submit_time": np.array([1.0])})


def test_training_without_run_times_is_refused(workdir):
    frame = small_frame()
    frame["wall_s"] = np.nan
    with pytest.raises(ttlpred.Error):
        ttlpred.train(frame, workdir / "never.ttlp", epochs=1, quiet=True)


def test_unknown_training_option(alice_csv, workdir):
    with pytest.raises(ttlpred.Error, match="epoch"):
        ttlpred.train(alice_csv, workdir / "never.ttlp", epoch=3)


def test_missing_model_file(workdir):
    with pytest.raises(ttlpred.Error, match="nothing-here"):
        ttlpred.Predictor(workdir / "nothing-here.ttlp")


@pytest.mark.parametrize("keep", [0, 7, 100, 0.5, 0.99])
def test_truncated_model_file_is_refused(alice_model, workdir, keep):
    data = alice_model.read_bytes()
    cut = int(len(data) * keep) if isinstance(keep, float) else keep
    path = workdir / f"truncated-{cut}.ttlp"
    path.write_bytes(data[:cut])
    with pytest.raises(ttlpred.Error, match=path.name):  # the message names the file
        ttlpred.Predictor(path)


def test_not_a_model_file(alice_csv):
    with pytest.raises(ttlpred.Error):
        ttlpred.Predictor(alice_csv)


def test_bad_options(alice_model):
    with pytest.raises(ttlpred.Error, match="alpha"):
        ttlpred.Predictor(alice_model, alpha=1.5)
    with pytest.raises(ttlpred.Error, match="fp64"):
        ttlpred.Predictor(alice_model, variant="fp64")


def test_model_of_another_schema_is_refused(alice_model, kth):
    with pytest.raises(ttlpred.Error, match="allow_schema_mismatch"):
        ttlpred.Predictor(alice_model).predict(kth)


def test_parquet_round_trip(alice_csv, alice_model, workdir):
    pytest.importorskip("pyarrow")
    frame = pd.read_csv(alice_csv, float_precision="round_trip")
    path = workdir / "alice.parquet"
    frame.to_parquet(path)
    back = ttlpred.read_parquet(path)
    model = ttlpred.Predictor(alice_model)
    np.testing.assert_array_equal(model.predict(back)["safe_ttl_s"], model.predict(alice_csv)["safe_ttl_s"])
