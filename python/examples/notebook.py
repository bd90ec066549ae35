# The notebook of docs/python.md: KTH-SP2 into a DataFrame, train, predict, kill rate.
import sys, numpy as np, ttlpred
trace = sys.argv[1] if len(sys.argv) > 1 else "../shared/data/traces/KTH-SP2__log.swf"
jobs = ttlpred.read_trace(trace)                          # a pandas DataFrame, one row per job
print(jobs[["wall_s", "requested_ttl_s", "cpu_cores"]].describe().loc[["count", "mean", "50%"]])
ttlpred.train(jobs, "kth.ttlp", split=0.8, hidden="64,64", epochs=5, threads=1, quiet=True)
model = ttlpred.Predictor("kth.ttlp")                     # alpha 1%: at most 1% of jobs killed
out = model.predict(jobs)                                 # NumPy arrays, one batch, GIL released
print("median safe TTL", np.median(out["safe_ttl_s"]) / 3600, "h")
result = ttlpred.evaluate(model, jobs, split=0.8)          # the jobs after the training 80%
print("kill rate", repr(result["kill_rate"]), "RMSE h", repr(result["rmse_hours"]))
