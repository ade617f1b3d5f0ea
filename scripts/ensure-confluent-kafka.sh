#!/usr/bin/env bash
# Makes Python's confluent-kafka (librdkafka's client, the one most non-JavaScript consumers use) and
# Brotli (for `br` page bodies) available in a virtual environment under .cache/kafka-python-venv for
# the example consumer in examples/python/, and prints the venv's python (scripts/ensure-python-venv.sh).
#
#   bash scripts/ensure-confluent-kafka.sh
set -euo pipefail
requirements="$(cd "$(dirname "$0")/.." && pwd)/examples/python/requirements.txt"
check="import confluent_kafka, brotli, sys; want = {l.split('==')[0].strip().lower(): l.split('==')[1].strip() for l in open('$requirements') if '==' in l}; sys.exit(0 if want.get('confluent-kafka') == confluent_kafka.__version__ else 1)"
exec bash "$(dirname "$0")/ensure-python-venv.sh" kafka-python-venv "$check" -r "$requirements"
