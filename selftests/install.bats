#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# install.bats - xnf as an operator installs it:
# - `make install DESTDIR=...`: every file in its FHS place, the installed
#   binary run from another directory (`xnf -V`, `xnf model` finding the
#   installed Python package next to it), the man page, bash completion
#   (device names of the namespace it runs in), `make uninstall`;
# - `make deb`: the package's contents, lintian without errors, installed
#   into a throwaway root with `dpkg --root` (never the host's: its dpkg
#   database is checked before and after), the binary run from there.
# Builds go to a temporary OUTPUT that is removed afterwards, except
# `make install`, which installs what `make` built next to $XNF.

bats_require_minimum_version 1.5.0
# `make deb` compiles everything once more: minutes on a busy machine.
: "${BATS_TEST_TIMEOUT:=900}"

load ../testbed/testbed

OUT=$(dirname "$XNF")

# The make of the tree, without what the calling make passes down in its
# environment (its variables and jobserver).
tmake()
{
	env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES -u MAKELEVEL \
		make -C "$TB_TOP" --no-print-directory "$@"
}

setup()
{
	tb_probe_root || skip "needs root"
	T=$(mktemp -d /tmp/xnf-install.XXXXXX)
}

teardown()
{
	[ -n "${T:-}" ] || return 0
	if [ -n "${ROOT_NS:-}" ]; then
		ip netns del "$ROOT_NS" || echo "teardown: cannot delete $ROOT_NS" >&2
	fi
	rm -rf -- "$T"
}

# python_wrapper: $T/python, an interpreter for XNF_PYTHON that writes the
# PYTHONPATH it was given to $T/pythonpath.
python_wrapper()
{
	printf '#!/bin/sh\nprintf "%%s\\n" "$PYTHONPATH" >"%s/pythonpath"\nexec /usr/bin/python3 "$@"\n' \
		"$T" >"$T/python"
	chmod +x "$T/python"
}

# upgrade_in_ns SAVE_STATUS: the package's preinst and postinst ($T/ctl)
# of an upgrade from 0.0.1, in a private mount namespace where
# /sys/fs/bpf/xnf holds tables and /usr/sbin/xnf is a stand-in that logs
# its arguments (and the file it applies) and whose save prints one line
# and exits SAVE_STATUS; /run and systemd's state are private too. Prints
# the log.
upgrade_in_ns()
{
	unshare -m --propagation private sh -ec '
		ctl=$1
		for d in /sys/fs/bpf /usr/sbin /run /etc/systemd /var/lib/systemd; do
			mount -t tmpfs xnf-test "$d"
		done
		mkdir -p /sys/fs/bpf/xnf/tables
		printf "%s\n" "#!/bin/sh" "echo \"\$*\" >>/run/xnf-test.log" \
			"case \$3 in" \
			"save) echo \"attach d0 chain l3fwd\"; exit $2 ;;" \
			"apply) cat \"\$4\" >>/run/xnf-test.log ;;" \
			"esac" >/usr/sbin/xnf
		chmod +x /usr/sbin/xnf
		touch /run/xnf-test.log
		st=0
		"$ctl/preinst" upgrade 0.0.1 && "$ctl/postinst" configure 0.0.1 ||
			st=$?
		[ ! -e /run/xnf/upgrade.conf ]
		cat /run/xnf-test.log
		exit $st' _ "$T/ctl" "$1"
}

# complete LINE: what bash completion of the installed file offers at the
# end of LINE, one per line, with the installed xnf first on PATH (the
# completion asks it for its NFs).
complete_line()
{
	PATH="$T/root/usr/local/sbin:$PATH" bash -c 'source "$1"
		COMP_LINE=$2; COMP_POINT=${#2}; _xnf
		printf "%s\n" "${COMPREPLY[@]}"' _ \
		"$T/root/usr/local/share/bash-completion/completions/xnf" "$1"
}

@test "make install: FHS places, run from another directory, uninstall" {
	local d=$T/root f

	run -0 tmake OUTPUT="$OUT" DESTDIR="$d" install
	for f in usr/local/sbin/xnf usr/local/bin/xnf-gen usr/local/bin/xnf-sink; do
		[ -x "$d/$f" ] || { echo "missing $f" >&2; false; }
	done
	for f in usr/local/share/man/man8/xnf.8 \
		usr/local/share/man/man1/xnf-gen.1 \
		usr/local/share/man/man1/xnf-sink.1 \
		usr/local/share/bash-completion/completions/xnf \
		usr/local/share/xnf/python/xnf_model/__main__.py \
		usr/local/share/xnf/python/xnf_model/model.py \
		usr/local/share/xnf/monitoring/dashboards/xnf.json \
		usr/local/share/xnf/monitoring/alerts/xnf-alerts.yaml \
		usr/local/share/xnf/monitoring/tests/xnf-alerts.test.yaml \
		usr/local/lib/systemd/system/xnf.service \
		usr/local/lib/systemd/system/xnf-worker@.service \
		usr/local/lib/systemd/system/xnf-route-sync.service \
		usr/local/lib/systemd/system/xnf-neigh-follow.service \
		usr/local/lib/systemd/system/xnf-exporter.service \
		usr/local/lib/systemd/system/xnf-log.service \
		usr/local/share/doc/xnf/examples/xnf.conf \
		usr/local/share/doc/xnf/examples/worker.conf \
		usr/local/share/doc/xnf/examples/route-sync.conf \
		etc/xnf/xnf.conf; do
		[ -f "$d/$f" ] || { echo "missing $f" >&2; false; }
	done
	[ -x "$d/usr/local/lib/systemd/system-generators/xnf-generator" ]
	[ -d "$d/etc/xnf/worker" ]
	# The units run the xnf of this PREFIX.
	grep -q "^ExecStart=/usr/local/sbin/xnf " "$d/usr/local/lib/systemd/system/xnf.service"
	! grep -q /usr/sbin/ "$d"/usr/local/lib/systemd/system/*.service

	# -V from /, as JSON: the version of this tree and the table schema.
	cd /
	run -0 "$d/usr/local/sbin/xnf" -j -V
	[ "$(jq -r .version <<<"$output")" = "$("$TB_TOP/scripts/version.sh")" ]
	[ "$(jq -r .table_schema <<<"$output")" = \
		"$(sed -n 's/^#define XNF_SCHEMA \([0-9]*\).*/\1/p' "$TB_TOP/include/uapi/xnf_dp.h")" ]
	jq -e '(.libbpf | test("^[0-9]+\\.[0-9]+$")) and (.libxdp_build | length > 0)' <<<"$output"
	run -0 "$d/usr/local/sbin/xnf" --version
	[ -n "$output" ]

	# `xnf model` runs the package installed next to the binary: the
	# interpreter is a wrapper that records the PYTHONPATH it was given.
	python_wrapper
	run -0 env -u XNF_PYTHONPATH XNF_PYTHON="$T/python" \
		"$d/usr/local/sbin/xnf" model help
	[ -n "$output" ]
	[ "$(realpath "$(cut -d: -f1 "$T/pythonpath")")" = \
		"$(realpath "$d/usr/local/share/xnf/python")" ]

	# The man page is clean and renders.
	run -0 groff -man -ww -z "$d/usr/local/share/man/man8/xnf.8"
	[ -z "$output" ]
	run -0 groff -man -Tutf8 "$d/usr/local/share/man/man8/xnf.8"
	[ "${#lines[@]}" -gt 100 ]

	# An edited configuration survives another install; uninstall leaves
	# only it.
	echo "# mine" >>"$d/etc/xnf/xnf.conf"
	cp "$d/etc/xnf/xnf.conf" "$T/conf"
	run -0 tmake OUTPUT="$OUT" DESTDIR="$d" install
	cmp "$T/conf" "$d/etc/xnf/xnf.conf"
	run -0 tmake OUTPUT="$OUT" DESTDIR="$d" uninstall
	run -0 find "$d" -type f
	[ "$output" = "$d/etc/xnf/xnf.conf" ]
}

@test "the man page documents every object of xnf help, and -V" {
	local objs o
	run -0 "$XNF" help
	objs=$(sed -n '/^OBJECT :=/,/}/p' <<<"$output" | tr -d '{}|' |
		sed 's/OBJECT :=//')
	[ -n "$objs" ]
	for o in $objs; do
		grep -q "^\.SS xnf $o " "$TB_TOP/docs/xnf.8" ||
			{ echo "xnf.8 has no section for $o" >&2; false; }
	done
	grep -q '^\.BR \\-V ", " \\-\\-version' "$TB_TOP/docs/xnf.8"
	for f in xnf.8 xnf-gen.1 xnf-sink.1; do
		run -0 groff -man -ww -z "$TB_TOP/docs/$f"
		[ -z "$output" ]
	done
}

@test "bash completion: objects, commands, NFs, keys, files, devices of this namespace" {
	local id
	run -0 tmake OUTPUT="$OUT" DESTDIR="$T/root" install

	run -0 complete_line "xnf ro"
	[ "$output" = route ]
	# A prefix of several objects or commands is the first in xnf's order.
	run -0 complete_line "xnf s "
	grep -qx help <<<"$output"
	! grep -qx percpu <<<"$output"
	run -0 complete_line "xnf c "
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "help set show " ]
	run -0 complete_line "xnf fw re"
	[ "$output" = reset ]
	run -0 complete_line "xnf r get 203.0.113.1 from 192.0.2.1 "
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "dport proto sport " ]
	run -0 complete_line "xnf -j fw add prio 10 drop pro"
	[ "$output" = proto ]
	run -0 complete_line "xnf chain set eth0 firewall,l"
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "firewall,l2fwd firewall,l3fwd " ]
	run -0 complete_line "xnf route add 203.0.113.0/24 nex"
	[ "$output" = nexthop ]
	run -0 complete_line "xnf route add 203.0.113.0/24 nexthop dev d1 lladdr 02:00:00:00:00:01 nex"
	[ "$output" = nexthop ]
	run -0 complete_line "xnf config set martian "
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "drop flood pass " ]
	run -0 complete_line "xnf config set flow_cache "
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "off on " ]
	run -0 complete_line "xnf config set ct_fragments "
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "drop pass " ]
	run -0 complete_line "xnf ct "
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "flush help show stats " ]
	run -0 complete_line "xnf ct show state SYN_SENT,un"
	[ "$output" = "SYN_SENT,unreplied" ]
	touch "$T/router.conf"
	run -0 complete_line "xnf apply $T/rou"
	[ "$output" = "$T/router.conf" ]
	run -0 complete_line "xnf -b $T/rou"
	[ "$output" = "$T/router.conf" ]

	# Devices: those of the network namespace the shell is in, also when
	# /sys belongs to another one (nsenter --net keeps the host's).
	id="xnf-$$-$RANDOM-compl"
	ip netns add "$id"
	ROOT_NS=$id
	ip -n "$id" link add cmpl-a0 type veth peer name cmpl-b0
	run -0 nsenter --net="/run/netns/$id" bash -c \
		'source "$1"; COMP_LINE="xnf attach cmpl"; COMP_POINT=${#COMP_LINE}; _xnf
		printf "%s\n" "${COMPREPLY[@]}"' _ \
		"$T/root/usr/local/share/bash-completion/completions/xnf"
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "cmpl-a0 cmpl-b0 " ]
	# ... and not there from the host's namespace.
	run -0 complete_line "xnf attach cmpl"
	[ -z "$output" ]
}

@test "make deb: contents, lintian, installed into a throwaway root only" {
	local deb root=$T/dpkg-root f

	# The host has no xnf package, before and after.
	run ! dpkg -s xnf
	[ ! -e /var/lib/dpkg/info/xnf.list ]
	command -v lintian

	run -0 tmake OUTPUT="$T/out" deb
	# lintian ran and reported no error (a warning is not an error).
	! grep '^E: ' <<<"$output"
	deb=$(ls "$T"/out/deb/xnf_*.deb)
	[ "$(dpkg-deb -f "$deb" Version)" = "$("$TB_TOP/scripts/version.sh")" ]

	run -0 dpkg-deb -c "$deb"
	for f in ./usr/sbin/xnf ./usr/bin/xnf-gen ./usr/bin/xnf-sink \
		./usr/share/man/man8/xnf.8.gz ./usr/share/man/man1/xnf-gen.1.gz \
		./usr/share/bash-completion/completions/xnf \
		./usr/share/xnf/python/xnf_model/__main__.py \
		./usr/share/xnf/monitoring/dashboards/xnf.json \
		./usr/share/xnf/monitoring/alerts/xnf-alerts.yaml \
		./usr/share/xnf/monitoring/tests/xnf-alerts.test.yaml \
		./usr/share/doc/xnf/monitoring.md.gz \
		./lib/systemd/system/xnf.service \
		./lib/systemd/system/xnf-worker@.service \
		./lib/systemd/system/xnf-route-sync.service \
		./lib/systemd/system/xnf-neigh-follow.service \
		./lib/systemd/system/xnf-exporter.service \
		./lib/systemd/system/xnf-log.service \
		./lib/systemd/system-generators/xnf-generator \
		./etc/xnf/xnf.conf ./usr/share/doc/xnf/copyright \
		./usr/share/doc/xnf/examples/worker.conf; do
		grep -q " $f\$" <<<"$output" || { echo "missing $f" >&2; false; }
	done
	! grep -q __pycache__ <<<"$output"
	run -0 dpkg-deb -f "$deb" Depends
	[[ $output == *libbpf* && $output == *libxdp* ]]

	# A throwaway root with its own dpkg database; the maintainer scripts
	# run outside it, told where it is (DPKG_ROOT), which they honour.
	mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" \
		"$root/var/lib/dpkg/triggers"
	touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
	run -0 dpkg --root="$root" --force-script-chrootless --force-depends \
		--log=/dev/null -i "$deb"
	run -0 dpkg --root="$root" -s xnf
	# Enabled in the root, started nowhere.
	[ -L "$root/etc/systemd/system/multi-user.target.wants/xnf.service" ]

	[ ! -e /etc/systemd/system/multi-user.target.wants/xnf.service ]

	# The installed binary, from /, and the Python package next to it.
	cd /
	run -0 "$root/usr/sbin/xnf" -j -V
	[ "$(jq -r .version <<<"$output")" = "$("$TB_TOP/scripts/version.sh")" ]
	python_wrapper
	run -0 env -u XNF_PYTHONPATH XNF_PYTHON="$T/python" \
		"$root/usr/sbin/xnf" model help
	[ -n "$output" ]
	[ "$(realpath "$(cut -d: -f1 "$T/pythonpath")")" = \
		"$(realpath "$root/usr/share/xnf/python")" ]

	# An upgrade hands the dataplane over: the old xnf saves what runs, the
	# new one applies it (docs/install.md, "Upgrades"); a save that fails stops
	# the upgrade before the old xnf is replaced.
	[ -d /etc/systemd ] && [ -d /var/lib/systemd ]
	dpkg-deb -e "$deb" "$T/ctl"
	run -0 --separate-stderr upgrade_in_ns 0
	[ "$output" = "$(printf '%s\n' "-w 30 save" \
		"-w 30 apply /run/xnf/upgrade.conf" "attach d0 chain l3fwd")" ]
	run -1 --separate-stderr upgrade_in_ns 1
	[ "$output" = "-w 30 save" ]

	run -0 dpkg --root="$root" --force-script-chrootless --log=/dev/null -P xnf
	[ ! -e "$root/usr/sbin/xnf" ]
	[ ! -e "$root/etc/xnf/xnf.conf" ]

	run ! dpkg -s xnf
	[ ! -e /var/lib/dpkg/info/xnf.list ]
}
