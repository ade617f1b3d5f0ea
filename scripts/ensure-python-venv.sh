#!/usr/bin/env bash
# Makes a Python virtual environment under .cache/<name> with the given packages for a test that
# reads meguri's output with another language's library, and prints the venv's python. Idempotent:
# kept while `check` (Python code) exits 0 in it. Needs python3 with the venv module, and the
# package index the first time.
#
#   bash scripts/ensure-python-venv.sh <name> <check> <pip install arguments...>
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: ensure-python-venv.sh <name> <check> <pip args...>" >&2; exit 64; }
name=$1 check=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.cache/$name"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$check" 2>/dev/null; then
  echo "$venv/bin/python"
  exit 0
fi
command -v python3 >/dev/null 2>&1 || { echo "ensure $name: python3 is not installed" >&2; exit 1; }
rm -rf "$venv"
python3 -m venv "$venv" >&2 || { echo "ensure $name: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
"$venv/bin/pip" install --quiet --disable-pip-version-check "$@" >&2 || { echo "ensure $name: pip could not install $*" >&2; exit 1; }
echo "$venv/bin/python"
