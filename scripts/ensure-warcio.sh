#!/usr/bin/env bash
# Makes Python's `warcio` (the reference WARC reader, independent of the JavaScript library meguri
# writes with) available in a virtual environment under .cache/warcio-venv and prints the venv's
# python. Idempotent; needs python3 with the venv module and the package index once.
#
#   bash scripts/ensure-warcio.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.cache/warcio-venv"
version=1.8.1
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import warcio, sys; sys.exit(0 if warcio.__version__ == '$version' else 1)" 2>/dev/null; then
  echo "$venv/bin/python"
  exit 0
fi
command -v python3 >/dev/null 2>&1 || { echo "ensure-warcio: python3 is not installed" >&2; exit 1; }
rm -rf "$venv"
python3 -m venv "$venv" >&2 || { echo "ensure-warcio: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
"$venv/bin/pip" install --quiet --disable-pip-version-check "warcio==$version" >&2 || { echo "ensure-warcio: pip could not install warcio==$version" >&2; exit 1; }
echo "$venv/bin/python"
