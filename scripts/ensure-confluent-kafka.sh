#!/usr/bin/env bash
# Makes Python's confluent-kafka (librdkafka's client, the one most non-JavaScript consumers use) and
# Brotli (for `br` page bodies) available in a virtual environment under .cache/kafka-python-venv for
# the example consumer in examples/python/, and prints the venv's python. Idempotent; needs python3
# with the venv module and the package index once.
#
#   bash scripts/ensure-confluent-kafka.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.cache/kafka-python-venv"
requirements="$root/examples/python/requirements.txt"
check="import confluent_kafka, brotli, sys; want = {l.split('==')[0].strip().lower(): l.split('==')[1].strip() for l in open('$requirements') if '==' in l}; sys.exit(0 if want.get('confluent-kafka') == confluent_kafka.__version__ else 1)"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$check" 2>/dev/null; then
  echo "$venv/bin/python"
  exit 0
fi
command -v python3 >/dev/null 2>&1 || { echo "ensure-confluent-kafka: python3 is not installed" >&2; exit 1; }
rm -rf "$venv"
python3 -m venv "$venv" >&2 || { echo "ensure-confluent-kafka: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" >&2 || { echo "ensure-confluent-kafka: pip could not install $requirements" >&2; exit 1; }
echo "$venv/bin/python"
