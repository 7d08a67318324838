#!/bin/sh
# Install the Debian packages dbtprof needs to build, test and benchmark.
# Only what is missing is installed; nothing is fetched from anywhere else.
#   sh tools/deps.sh         what `make check` and `make bench` need
#   sh tools/deps.sh bench   also the compilers of the cycle model's version
#                            pairs (clang 13 to 16, about 1.5 GB)
set -eu
PKGS="make gcc libc6-dev pkg-config libzstd-dev libcapstone-dev qemu-user
gcc-aarch64-linux-gnu libc6-dev-arm64-cross jq valgrind clang
libclang-rt-14-dev llvm-14 llvm-16 xz-utils lua5.1 lua5.2 lua5.3 lua5.4 sqlite3 pigz time strace procps"
[ "${1:-}" = bench ] && PKGS="$PKGS clang-13 clang-15 clang-16"
missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "deps: all packages present"
	exit 0
fi
echo "deps: installing$missing"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
