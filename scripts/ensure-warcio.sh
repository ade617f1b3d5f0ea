#!/usr/bin/env bash
# Makes Python's `warcio` (the reference WARC reader, independent of the JavaScript library meguri
# writes with) available in a virtual environment under .cache/warcio-venv and prints the venv's
# python (scripts/ensure-python-venv.sh).
#
#   bash scripts/ensure-warcio.sh
set -euo pipefail
version=1.8.1
exec bash "$(dirname "$0")/ensure-python-venv.sh" warcio-venv \
  "import warcio, sys; sys.exit(0 if warcio.__version__ == '$version' else 1)" "warcio==$version"
