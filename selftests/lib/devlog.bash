# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# devlog.bash - a private syslog for tests that check what xnf sends to
# the system log (monitor.bats, pktlog.bats). Needs TB_TMP, TB_TOP and
# TB_TIMEOUT exported.

# in_devlog_ns SCRIPT: bash SCRIPT in a private mount namespace whose /dev
# is a small tmpfs (null, zero, urandom and the fds bound from the real
# one) with a syslog socket at /dev/log, read by syslog_sink.py into
# $TB_TMP/syslog.txt. The namespace, its mounts and the sink go with it.
in_devlog_ns()
{
	unshare --mount --propagation private bash -euc '
		d=$TB_TMP/dev
		mkdir -p "$d"
		mount -t tmpfs -o mode=0755 xnf-test-dev "$d"
		for n in null zero full random urandom; do
			touch "$d/$n"
			mount --bind "/dev/$n" "$d/$n"
		done
		ln -s /proc/self/fd "$d/fd"
		mount --bind "$d" /dev
		timeout "$TB_TIMEOUT" python3 "$TB_TOP/selftests/lib/syslog_sink.py" \
			/dev/log "$TB_TMP/syslog.txt" "$TB_TIMEOUT" &
		sink=$!
		for i in $(seq 200); do [ -S /dev/log ] && break; sleep 0.05; done
		rc=0
		[ -S /dev/log ] && (eval "$1") || rc=$?
		kill "$sink" 2>/dev/null || true
		wait "$sink" || true
		exit "$rc"' _ "$1"
}
