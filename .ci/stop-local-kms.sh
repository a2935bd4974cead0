#!/usr/bin/env bash
# Stops the local-kms started by .ci/start-local-kms.sh <workdir>: SIGTERM, then SIGKILL after a grace period.
#
#   .ci/stop-local-kms.sh <workdir>
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 <workdir>" >&2
  exit 2
fi

exec "$(dirname "${BASH_SOURCE[0]}")/stop-by-pid-file.sh" local-kms "$1/local-kms.pid"
