# The estimator of docs/python.md: fit on the past, cross-validate in time order, save with
# joblib, and the same answers as the model file through `ttlpred predict`. Needs scikit-learn.
import sys, joblib, numpy as np, ttlpred
from sklearn.model_selection import TimeSeriesSplit, cross_val_score
trace = sys.argv[1] if len(sys.argv) > 1 else "../shared/data/traces/KTH-SP2__log.swf"
jobs = ttlpred.read_trace(trace).sort_values("submit_time", kind="stable").reset_index(drop=True)
past, future = jobs.iloc[: int(0.8 * len(jobs))], jobs.iloc[int(0.8 * len(jobs)):]
est = ttlpred.TTLRegressor(hidden="64,64", epochs=5, threads=1)     # every `ttlpred train` option
rmse = -cross_val_score(est, past, past["wall_s"], cv=TimeSeriesSplit(n_splits=3),
                        scoring="neg_root_mean_squared_error")       # each fold: train on its past
print("RMSE h per fold", np.round(rmse / 3600, 3))
est.fit(past)
joblib.dump(est, "kth.joblib")                                      # the model file's bytes inside
out = joblib.load("kth.joblib").predict_frame(future)               # DataFrame on future's index
open("kth-estimator.ttlp", "wb").write(est.predictor_.model_bytes())  # `ttlpred predict --model` it
print(out[["expected_wall_s", "safe_ttl_s"]].describe().loc[["mean", "50%"]] / 3600)
