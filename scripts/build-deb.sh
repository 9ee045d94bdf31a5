#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# scripts/build-deb.sh DIR (`make deb`): builds xnf's Debian package from a
# copy of the tree in DIR, which it empties first, so that nothing is
# written outside DIR: the copy (DIR/xnf-VERSION, its debian/changelog
# written for the version of scripts/version.sh, which also becomes its
# VERSION file), the build in it, then xnf_VERSION_ARCH.deb and the
# .buildinfo and .changes next to it. lintian checks the result; an error
# fails the build.
set -euo pipefail

out=${1:?usage: scripts/build-deb.sh DIR}
top=$(cd "$(dirname "$0")/.." && pwd -P)
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
case $top/ in
"$out"/*) echo "Error: $out holds the source tree; give a directory below it" >&2; exit 1 ;;
esac
version=$("$top/scripts/version.sh")
src=$out/xnf-$version

find "$out" -mindepth 1 -delete
mkdir -p "$src"
# What `make` would build: the files git knows and new ones it does not
# ignore (with their changes), else, without git, the tree but .git and
# DIR.
if [ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" = "$top" ]; then
	git -C "$top" ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			[ -e "$top/$f" ] && printf '%s\0' "$f"
		done | tar -C "$top" --null -T - -cf - | tar -C "$src" -xf -
else
	tar -C "$top" --exclude=./.git --exclude="./${out#"$top"/}" -cf - . |
		tar -C "$src" -xf -
fi
echo "$version" >"$src/VERSION"
if date=$(git -C "$top" log -1 --format=%cD 2>/dev/null) && [ -n "$date" ]; then
	:
else
	date=$(date -R)
fi
maint=$(sed -n 's/^Maintainer: //p' "$src/debian/control")
cat >"$src/debian/changelog" <<EOT
xnf ($version) unstable; urgency=medium

  * Built from the xnf source tree at version $version.

 -- $maint  $date
EOT

cd "$src"
# Nothing of the calling make (its command-line variables travel in
# MAKEFLAGS: OUTPUT=... would point the package's build at the caller's).
env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES -u MAKELEVEL -u OUTPUT \
	-u DESTDIR -u PREFIX dpkg-buildpackage -b -us -uc -Jauto
cd "$out"
deb=$(ls xnf_"$version"_*.deb)
echo "built $out/$deb"
if command -v lintian >/dev/null 2>&1; then
	lintian --fail-on error "$out"/xnf_"$version"_*.changes
else
	echo "lintian is not installed: the package was not checked" >&2
fi
