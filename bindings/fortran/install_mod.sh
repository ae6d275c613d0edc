#!/bin/sh
# meson install: copy the module file passion.mod (from the library's
# private build directory) to the include directory. $1: this folder's
# build directory, $2: includedir (relative to the prefix, or absolute).
set -e
mod=$(find "$1" -name passion.mod | head -n 1)
[ -n "$mod" ] || { echo "install_mod.sh: no passion.mod in $1" >&2; exit 1; }
case "$2" in
  /*) dest="${DESTDIR}$2" ;;
  *) dest="$MESON_INSTALL_DESTDIR_PREFIX/$2" ;;
esac
mkdir -p "$dest"
cp "$mod" "$dest/passion.mod"
echo "Installing $mod to $dest"
