#!/usr/bin/env bash
# Runs the README's commands as a newcomer would, on a fresh machine: a minimal Debian 12
# tree (debootstrap --variant=minbase bookworm) with nothing of ours installed, entered with
# chroot. Inside it, a copy of the committed sources runs the README's two commands:
#   1. scripts/quickstart.sh --jobs N   (the main job, on a small trace)
#   2. scripts/test.sh                  (release, ASan+UBSan and AVX-512 builds and tests;
#                                        the release build is the one command 1 made)
# so any package the build, the tests or the main job need and scripts/setup.sh does not
# install fails here, whatever the host has installed by hand. CI runs it (.ci/run).
#
# Usage: scripts/fresh-check.sh [--jobs N] [--keep]
#   --jobs N  synthetic jobs for the main job (default 20000)
#   --keep    leave the tree in build-fresh/ for inspection (default: delete it)
# Needs root (debootstrap, chroot, mounts) and the host's Debian mirror; reads the
# mirror from the host's apt sources so that the tree installs from where the host does.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
jobs=20000
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "fresh-check: unknown option $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "fresh-check: needs root (debootstrap, chroot)" >&2; exit 2; }

start=$(date +%s)
stamp() { echo "== fresh-check [$(( $(date +%s) - start )) s] $*"; }

if ! command -v debootstrap > /dev/null; then
  stamp "installing debootstrap on the host"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap > /dev/null
fi

# The first Debian mirror the host's apt uses (deb822 .sources or one-line sources.list).
mirror=$(
  { grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}';
    grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '{print $2}'; } |
    grep -v -- '-security' | head -n 1) || true
[ -n "$mirror" ] || { echo "fresh-check: no Debian mirror found in the host's apt sources" >&2; exit 2; }

root="$repo/build-fresh/rootfs"
mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2> /dev/null || true; done
  # Never follow a mount that is somehow still there (the host's /dev, shared/) while deleting.
  if [ "$keep" -eq 0 ] && ! grep -q " $repo/build-fresh/" /proc/mounts; then
    rm -rf --one-file-system "$repo/build-fresh"
  fi
}
trap cleanup EXIT
for m in proc sys dev; do
  if mountpoint -q "$root/$m" 2> /dev/null; then umount -l "$root/$m"; fi
done
if grep -q " $repo/build-fresh/" /proc/mounts; then
  echo "fresh-check: something is still mounted under build-fresh/; unmount it first" >&2
  exit 2
fi
rm -rf --one-file-system "$repo/build-fresh"
mkdir -p "$root"

stamp "debootstrap --variant=minbase bookworm (mirror from the host's apt sources)"
debootstrap --variant=minbase bookworm "$root" "$mirror" > "$repo/build-fresh/debootstrap.log" 2>&1 ||
  { tail -n 30 "$repo/build-fresh/debootstrap.log"; exit 1; }

# What a newcomer has: the sources of this commit (not the host's build folders), the
# project's shared/ folder beside them (read-only, as CI lays it), a resolver and /proc.
stamp "copying the committed sources into the tree"
mkdir -p "$root/work/ttlpred"
git -C "$repo" archive --format=tar HEAD | tar -x -C "$root/work/ttlpred"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc" && mounted+=("$root/proc")
mount --rbind /dev "$root/dev" && mounted+=("$root/dev")
if [ -d "$repo/../shared" ]; then
  mkdir -p "$root/work/shared"
  mount --bind "$repo/../shared" "$root/work/shared" && mounted+=("$root/work/shared")
  mount -o remount,bind,ro "$root/work/shared"
fi

# CI's compile cache (scripts/ci-ccache.sh), when it is on: the host's cache mounted into the
# tree and ccache installed there, as a CI tool before the README's commands. Everything the
# project needs is still installed by scripts/setup.sh alone: an object is replayed only when
# every header it read is there with the same bytes.
cache_env=()
if [ -n "${TTLPRED_CCACHE_DIR:-}" ] && [ -d "$TTLPRED_CCACHE_DIR" ]; then
  mkdir -p "$root/ccache"
  mount --bind "$TTLPRED_CCACHE_DIR" "$root/ccache" && mounted+=("$root/ccache")
  cache_env=(CCACHE_DIR=/ccache CCACHE_BASEDIR=/work/ttlpred CCACHE_NOHASHDIR=1 CCACHE_COMPILERCHECK=content
             "CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}" CMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
in_tree() {
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "${cache_env[@]}" bash -c "$1"
}
if [ ${#cache_env[@]} -gt 0 ]; then
  stamp "installing ccache in the tree (CI's compile cache, $TTLPRED_CCACHE_DIR)"
  in_tree "export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq --no-install-recommends ccache > /dev/null"
fi

stamp "README command 1 in the fresh tree: scripts/quickstart.sh --jobs $jobs"
in_tree "cd /work/ttlpred && scripts/quickstart.sh --jobs $jobs"
test -s "$root/work/ttlpred/out/report.md" || { echo "fresh-check: the main job wrote no out/report.md" >&2; exit 1; }

stamp "README command 2 in the fresh tree: scripts/test.sh"
in_tree "cd /work/ttlpred && scripts/test.sh"

[ ${#cache_env[@]} -eq 0 ] || in_tree "ccache --show-stats | grep -E 'Hits|Misses' | head -n 2"
stamp "passed"
