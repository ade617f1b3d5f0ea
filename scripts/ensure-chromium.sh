#!/usr/bin/env bash
# Makes a Chromium for the live-view test available and prints its path: already on PATH, or (as
# root on Debian/Ubuntu) installed with apt as Debian's `chromium` package. Exits non-zero with the
# reason on stderr otherwise. Idempotent; prints only the path.
#
#   bash scripts/ensure-chromium.sh
set -euo pipefail
for name in chromium chromium-browser; do
  if path=$(command -v "$name"); then
    echo "$path"
    exit 0
  fi
done
[ "$(id -u)" = 0 ] || { echo "ensure-chromium: chromium is not on PATH and installing it needs root (Debian: apt-get install chromium)" >&2; exit 1; }
command -v apt-get >/dev/null 2>&1 || { echo "ensure-chromium: chromium is not on PATH and there is no apt-get here" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq chromium >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1; } || { echo "ensure-chromium: apt-get could not install chromium" >&2; exit 1; }
command -v chromium
