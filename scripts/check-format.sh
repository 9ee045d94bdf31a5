#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Checks the C sources against .clang-format (the kernel's style).
#   scripts/check-format.sh          report what clang-format would change;
#                                    exit 1 if anything, as in CI
#   scripts/check-format.sh --fix    rewrite the files in place
#   scripts/check-format.sh FILE...  only these files
# CLANG_FORMAT=path picks the binary; else clang-format, else the newest
# clang-format-NN on PATH (Debian's clang-format package, install-deps.sh).
set -euo pipefail

cd "$(dirname "$0")/.."

fix=0
if [ "${1:-}" = "--fix" ]; then
	fix=1
	shift
fi

cf=${CLANG_FORMAT:-}
if [ -z "$cf" ]; then
	if command -v clang-format >/dev/null 2>&1; then
		cf=clang-format
	else
		cf=$(compgen -c clang-format- | grep -E '^clang-format-[0-9]+$' |
			sort -t- -k3 -n | tail -n1 || true)
	fi
fi
if [ -z "$cf" ] || ! command -v "$cf" >/dev/null 2>&1; then
	echo "Error: no clang-format; run scripts/install-deps.sh as root" >&2
	exit 2
fi

# The C of every room that exists; never build output or generated files
# (skeletons and vmlinux.h live in the build directory anyway).
dirs=(bpf include lib userspace common cli tools selftests loader)
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
	existing=()
	for d in "${dirs[@]}"; do
		[ -d "$d" ] && existing+=("$d")
	done
	[ ${#existing[@]} -gt 0 ] || exit 0
	mapfile -t files < <(find "${existing[@]}" \
		\( -name build -o -name 'build-*' -o -name .git \) -prune -o \
		-type f \( -name '*.c' -o -name '*.h' \) \
		! -name '*.skel.h' ! -name vmlinux.h ! -name '*.lskel.h' \
		-print | LC_ALL=C sort)
fi
[ ${#files[@]} -gt 0 ] || exit 0

if [ $fix -eq 1 ]; then
	exec "$cf" -i --style=file "${files[@]}"
fi

# One warning per change, file:line:col; the count and the files summed up.
out=$("$cf" --dry-run -Werror --style=file "${files[@]}" 2>&1) && rc=0 || rc=$?
if [ $rc -eq 0 ]; then
	exit 0
fi
printf '%s\n' "$out"
nfiles=$(printf '%s\n' "$out" | sed -n 's/^\([^: ]*\):[0-9]*:[0-9]*: error:.*/\1/p' |
	sort -u | wc -l)
nwarn=$(printf '%s\n' "$out" | grep -c ': error: code should be clang-formatted' || true)
echo "check-format: $nwarn places in $nfiles files differ from .clang-format" \
	"($cf); 'make format' rewrites them" >&2
exit 1
