#!/usr/bin/env bash
# Stops the FerretDB started by .ci/start-ferretdb.sh <workdir>: SIGTERM, then SIGKILL after a grace period.
#
#   .ci/stop-ferretdb.sh <workdir>
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 <workdir>" >&2
  exit 2
fi

exec "$(dirname "${BASH_SOURCE[0]}")/stop-by-pid-file.sh" ferretdb "$1/ferretdb.pid"
