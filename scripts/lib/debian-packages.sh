# Sourced by the scripts that install the Debian packages they need (setup.sh, fuzz.sh,
# coverage.sh): one definition of "is it installed" and of "install it" (apt-get through
# sudo unless root, quiet and non-interactive).

# Prints each named package that dpkg does not list as installed, one a line.
missing_packages() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

# install_packages WHO PKG...: says "WHO: installing PKG..." and installs them.
install_packages() {
  local who=$1
  shift
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  echo "$who: installing $*"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@"
}
