"""ttlpred.backtest and ttlpred.simulate against `ttlpred backtest/simulate --json` on the same
small traces: the same JSON object, number for number (only the wall-clock timings, which
no two runs share, are left out), and the options refused as the command refuses them."""
import json

import pytest

import ttlpred
from conftest import cli

BACKTEST = dict(splits=[0.6, 0.8], epochs=1, seed=2, min_window_rows=50, window_days=3)
BACKTEST_ARGS = ["--splits", "0.6,0.8", "--epochs", 1, "--seed", 2, "--min-window-rows", 50, "--window-days", 3]


def cli_json(*args):
    return json.loads(cli(*args, "--json"))


def without_timings(result):
    result.pop("simulate_seconds", None)
    result.get("online", {}).pop("train_seconds", None)
    for split in result.get("splits", []):
        split.pop("fit_seconds")
    return result


@pytest.fixture(scope="module")
def small_swf(workdir):
    """A batch trace with a MaxProcs header, each job's request above its run time except every 9th."""
    path = workdir / "small.swf"
    lines = ["; Version: 2.2", "; MaxProcs: 16", "; MaxNodes: 16"]
    for i in range(1, 301):
        run = 60 + (i * 37) % 3000
        procs = 1 + (i * 7) % 8
        request = run * 2 if i % 9 else run
        fields = [i, i * 90, -1, run, procs, -1, -1, procs, request, -1, 1, 1 + i % 5, 1, -1, 1, -1, -1, -1]
        lines.append(" ".join(map(str, fields)))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_backtest_same_object_as_the_cli(alice_csv):
    from_cli = cli_json("backtest", "--data", alice_csv, *BACKTEST_ARGS)
    from_python = ttlpred.backtest(str(alice_csv), **BACKTEST)
    assert without_timings(from_python) == without_timings(from_cli)
    assert [s["split"] for s in from_python["splits"]] == [0.6, 0.8]
    assert from_python["data"] == str(alice_csv)


def test_backtest_per_job_is_the_files_of_the_cli(alice_csv, workdir):
    cli("backtest", "--data", alice_csv, *BACKTEST_ARGS, "--per-job", workdir / "cli-per-job.csv")
    ttlpred.backtest(str(alice_csv), per_job=str(workdir / "py-per-job.csv"), **BACKTEST)
    from_cli = (workdir / "cli-per-job.csv").read_text()
    assert (workdir / "py-per-job.csv").read_text() == from_cli
    assert from_cli.startswith("split,submit_s,wait_s,wall_s,requested_s,user_q99_s,pred_s,ttl_static,")


def test_backtest_of_a_frame_is_the_backtest_of_its_file(alice_csv):
    frame = ttlpred.read_trace(alice_csv)
    from_frame = without_timings(ttlpred.backtest(frame, **BACKTEST))
    from_file = without_timings(ttlpred.backtest(alice_csv, **BACKTEST))
    assert from_frame.pop("data") == "<columns>"
    from_file.pop("data")
    assert from_frame == from_file


@pytest.mark.parametrize("options", [
    dict(scheduler="jalien", ttl="static", split=0),
    dict(scheduler="jalien", ttl="oracle", load=0.8, pilot_gap=120, seed=5),
    dict(scheduler="jalien", ttl="jalien-stats", stats_rule="mean+3sd", stats_min_jobs=3),
    # Retrained every 12 h of the trace's ~3 days (a few retrains, each a training: hourly ones
    # made this one test take 12 minutes in the coverage build).
    dict(scheduler="jalien", ttl="online", split=0, online_min_jobs=200, retrain_every="12h", train_seed=2,
         calibration="aci-log"),
])
def test_simulate_broker_same_object_as_the_cli(alice_csv, options):
    args = []
    for k, v in options.items():
        args += ["--" + k.replace("_", "-"), v]
    from_cli = cli_json("simulate", "--data", alice_csv, *args)
    assert without_timings(ttlpred.simulate(str(alice_csv), **options)) == without_timings(from_cli)


def test_simulate_with_a_model_same_object_as_the_cli(alice_csv, alice_model):
    from_cli = cli_json("simulate", "--data", alice_csv, "--scheduler", "jalien", "--ttl", "model", "--model",
                        alice_model, "--alpha", 0.02)
    predictor = ttlpred.Predictor(alice_model)
    from_python = ttlpred.simulate(alice_csv, scheduler="jalien", ttl="model", model=predictor, alpha=0.02)
    assert without_timings(from_python) == without_timings(from_cli)
    assert from_python["policy"] == "model" and from_python["jobs"] == 800  # the 20% after the 0.8 split


def test_simulate_batch_sized_by_the_swf_header(small_swf):
    from_cli = cli_json("simulate", "--data", small_swf, "--scheduler", "easy", "--ttl", "request", "--split", 0)
    from_python = ttlpred.simulate(small_swf, scheduler="easy", ttl="request", split=0)
    assert without_timings(from_python) == without_timings(from_cli)
    assert from_python["procs"] == 16 and from_python["jobs"] == 300
    # A frame has no header to read: the machine size must be given, and then it is the same run.
    frame = ttlpred.read_trace(small_swf)
    with pytest.raises(ttlpred.Error, match="give --procs"):
        ttlpred.simulate(frame, scheduler="easy", split=0)
    sized = without_timings(ttlpred.simulate(frame, scheduler="easy", split=0, procs=16))
    assert sized.pop("trace") == "<columns>"
    from_python.pop("trace")
    assert sized == from_python


def test_simulate_out_writes_the_files_the_cli_writes(alice_csv, workdir):
    out = workdir / "py-simulate"
    ttlpred.simulate(alice_csv, scheduler="jalien", ttl="static", out=out)
    assert {p.name for p in out.iterdir()} == {"schedule.csv", "timeseries.csv", "report.html"}
    assert len((out / "schedule.csv").read_text().splitlines()) == 800 + 1


def test_unknown_and_bad_options_are_refused_by_name(alice_csv):
    with pytest.raises(ttlpred.Error, match="unknown backtest option 'windw_days'.*window-days"):
        ttlpred.backtest(alice_csv, windw_days=3)
    with pytest.raises(ttlpred.Error, match="window-days"):
        ttlpred.backtest(alice_csv, window_days="three")
    with pytest.raises(ttlpred.Error, match="--splits: 'x' is not a number"):
        ttlpred.backtest(alice_csv, splits="0.5,x")
    with pytest.raises(ttlpred.Error, match="unknown simulate option 'json'"):
        ttlpred.simulate(alice_csv, json=True)
    with pytest.raises(ttlpred.Error, match="--ttl request does not apply to --scheduler jalien"):
        ttlpred.simulate(alice_csv, scheduler="jalien", ttl="request")
    with pytest.raises(ttlpred.Error, match="--ttl model needs --model"):
        ttlpred.simulate(alice_csv, scheduler="jalien", ttl="model")
