#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Installs what xnf needs to build and test, from Debian's packages.
#   scripts/install-deps.sh          install what is missing (needs root)
#   scripts/install-deps.sh --check  print what is missing, install nothing
# The Makefile calls --check on every build and this script when it prints
# anything, so a fresh machine needs no manual step.
set -euo pipefail

# command or pkg-config module -> Debian package
need=(
	"cmd:clang:clang"
	"cmd:llvm-strip:llvm"
	"cmd:bpftool:bpftool"
	"cmd:pkg-config:pkg-config"
	"cmd:make:make"
	"cmd:cc:gcc"
	"cmd:ip:iproute2"
	"cmd:bats:bats"
	"cmd:jq:jq"
	"cmd:tcpdump:tcpdump"
	"cmd:ethtool:ethtool"
	"cmd:nft:nftables"
	"cmd:bird:bird2"
	"cmd:ping:iputils-ping"
	"cmd:socat:socat"
	"cmd:timeout:coreutils"
	"cmd:sysctl:procps"
	"cmd:awk:gawk"
	"cmd:clang-format:clang-format"
	"cmd:dh:debhelper"
	"cmd:lintian:lintian"
	"cmd:systemd-analyze:systemd"
	"cmd:groff:groff-base"
	# the Prometheus text checker of the exporter's tests (promtool check
	# metrics); Debian ships it only in the server package
	"cmd:promtool:prometheus"
	"cmd:curl:curl"
	"pc:libbpf:libbpf-dev"
	"pc:libxdp:libxdp-dev"
	"pc:libelf:libelf-dev"
	"pc:zlib:zlib1g-dev"
	"hdr:/usr/include/pcap/pcap.h:libpcap-dev"
	"py:matplotlib:python3-matplotlib"
	"py:numpy:python3-numpy"
	"py:scipy:python3-scipy"
	# selftests/json.bats: the JSON Schemas of docs/json (draft 2020-12)
	"py:jsonschema:python3-jsonschema"
	# selftests/ct_diff.bats, nat_diff.bats: the packet sequences sent through
	# Linux and xnf
	"py:scapy:python3-scapy"
	# selftests/monitoring.bats: the expressions of the alerting rules
	"py:yaml:python3-yaml"
)

missing=()
for n in "${need[@]}"; do
	IFS=: read -r kind what pkg <<<"$n"
	case $kind in
	cmd) command -v "$what" >/dev/null 2>&1 && continue ;;
	pc) command -v pkg-config >/dev/null 2>&1 &&
		pkg-config --exists "$what" 2>/dev/null && continue ;;
	hdr) [ -e "$what" ] && continue ;;
	# the Debian interpreter: its packages are not on other pythons' paths
	py) /usr/bin/python3 -c "import $what" >/dev/null 2>&1 && continue ;;
	esac
	missing+=("$pkg")
done

if [ "${1:-}" = "--check" ]; then
	[ ${#missing[@]} -eq 0 ] || echo "${missing[*]}"
	exit 0
fi
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "Error: missing packages: ${missing[*]}; run scripts/install-deps.sh as root" >&2
	exit 1
fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
