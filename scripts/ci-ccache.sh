#!/usr/bin/env bash
# CI's compile cache. Sourced by .ci/run (never by the README's commands): CI builds the
# same sources up to five times (release with CUDA on the host; release, ASan+UBSan and
# AVX-512 in the fresh tree; the fuzz targets with clang), most of them unchanged since the
# last run on this machine, and the compiles are most of CI's time on two cores. ccache
# replays an object only when the compiler, its flags, the source and every header it read
# are byte-identical, so a header a fresh machine lacks is still a failed compile, and
# linking, configuring and every test still run in full.
#
# It installs ccache (Debian 12's) when missing and exports what CMake (3.17+ reads
# CMAKE_<LANG>_COMPILER_LAUNCHER from the environment when a build folder is first
# configured) and ccache need:
#   CCACHE_BASEDIR       the repository root: paths inside it are hashed relative, so a clone
#                        in another folder (CI's, the fresh tree's /work/ttlpred) hits the
#                        objects of any other clone
#   CCACHE_NOHASHDIR     the ASan preset's -g would otherwise put the build folder in the key
#   CCACHE_COMPILERCHECK the compiler's bytes, not its mtime: the fresh tree installs the same
#                        Debian g++ at another time
# fresh-check.sh mounts the same cache into its tree when TTLPRED_CCACHE_DIR is set.
# TTLPRED_CI_CCACHE=0 turns it off (every object compiled, as on a newcomer's machine).
if [ "${TTLPRED_CI_CCACHE:-1}" != 0 ]; then
  if ! command -v ccache > /dev/null; then
    echo "== ci: installing ccache (CI's compile cache)"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ccache > /dev/null
  fi
  export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
  export CCACHE_BASEDIR=$PWD
  export CCACHE_NOHASHDIR=1
  export CCACHE_COMPILERCHECK=content
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CMAKE_CUDA_COMPILER_LAUNCHER=ccache
  export TTLPRED_CCACHE_DIR=$CCACHE_DIR
  mkdir -p "$CCACHE_DIR"
  ccache --zero-stats > /dev/null
  echo "== ci: compile cache $CCACHE_DIR ($(ccache --show-stats 2> /dev/null | awk '/Cache size/ {print $4; exit}') GB before this run)"
fi
