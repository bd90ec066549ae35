#!/bin/sh
# Optional: installs what the accuracy peers in ../shared/peers need (swf_baseline.py's
# XGBoost with the user's history, safe_ttl_anchor.py's simple rule), from Debian 12's own
# packages, run with /usr/bin/python3. They are comparison points for docs/ACCURACY.md, not
# dependencies of ttlpred: nothing here is needed to build, test or run it.
set -eu
if [ "$(id -u)" -ne 0 ]; then
  echo "peers-setup.sh: run as root (apt-get)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends python3 python3-numpy python3-xgboost python3-sklearn
