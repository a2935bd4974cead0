#!/usr/bin/env bash
# Installs what the typed clients are generated, built and run with (`npm run clients`, test/e2e/clients.test.ts,
# `npm run release:clients`), from the package registries only: the OpenAPI Generator jar (Maven Central, into
# ~/.m2), PHP with Debian's Guzzle and Composer (apt), a Python venv with setuptools and wheel (PyPI). The clients'
# own dependencies come with them: Go modules during generation (`go mod tidy`), the Python client's when it is
# installed into the venv. Caches reused between runs: ~/.m2, pip's cache, Go's module cache.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

generator=org.openapitools:openapi-generator-cli:$(sed -n "s/^export const GENERATOR_VERSION = '\(.*\)';/\1/p" bin/generate-clients.ts)
echo "clients: $generator (Maven Central)"
mvn_log=$(mktemp)
if ! mvn -B -q dependency:get -Dartifact="$generator" -Dtransitive=false >"$mvn_log" 2>&1; then
  cat "$mvn_log" >&2
  exit 1
fi
rm -f "$mvn_log"

php_packages=(php-cli php-curl php-mbstring php-xml composer php-guzzlehttp-guzzle php-guzzlehttp-psr7)
installed=$(dpkg-query -W -f='${db:Status-Abbrev}\n' "${php_packages[@]}" 2>/dev/null | grep -c '^ii' || true)
if [[ $installed -ne ${#php_packages[@]} ]]; then
  echo "clients: apt-get install ${php_packages[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${php_packages[@]}" >/dev/null
fi
php --version | head -1
composer --version 2>/dev/null

echo "clients: Python venv clients/python/.venv (PyPI)"
[[ -x clients/python/.venv/bin/python ]] || python3 -m venv clients/python/.venv
clients/python/.venv/bin/python -m pip install --quiet --disable-pip-version-check setuptools wheel
