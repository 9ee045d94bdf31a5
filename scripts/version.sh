#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Prints xnf's version, one form for `xnf -V` and the Debian package alike:
#   a tag vX.Y.Z:           X.Y.Z
#   N commits after it:     X.Y.Z+N.gHASH
#   no tag in the history:  VERSION+gHASH (VERSION: the next release)
#   uncommitted changes:    .dirty appended
#   no git (a tarball):     the VERSION file as it is
# `make deb` writes this into the VERSION file of the copy it builds, so
# that a build without .git says the same. Only digits, letters and
# "+.~" appear: a Debian native version.
cd "$(dirname "$0")/.." || exit 1
base=$(sed -n '1{s/[[:space:]]//g;p;}' VERSION)
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
	[ "$(git rev-parse --show-toplevel)" != "$(pwd -P)" ]; then
	echo "$base"
	exit 0
fi
if desc=$(git describe --tags --match 'v[0-9]*' --dirty=.dirty 2>/dev/null); then
	# v1.2.3, v1.2.3-4-gabcdef0, with .dirty
	echo "$desc" | sed -e 's/^v//' -e 's/-/+/' -e 's/-/./g'
else
	echo "$base+g$(git describe --always --abbrev=12 --dirty=.dirty)"
fi
