#!/usr/bin/env bash
# Make sure Prometheus and promtool (Debian's `prometheus` package) are installed; the monitoring tests
# run both for real. Installs through apt when missing; fails loudly when it cannot.
set -euo pipefail
if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "prometheus.sh: installing prometheus (promtool) through apt" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi
if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
  echo "prometheus.sh: please install Prometheus and promtool (Debian: apt-get install prometheus)" >&2
  exit 1
fi
