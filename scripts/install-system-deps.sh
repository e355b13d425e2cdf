#!/usr/bin/env bash
# System packages the integration tests use: Dovecot (IMAP + LMTP),
# PostgreSQL and Chromium. Idempotent; quiet when everything is already there.
set -euo pipefail
need=()
command -v dovecot >/dev/null 2>&1 || need+=(dovecot-imapd dovecot-lmtpd)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
# Chromium: the game site is checked in a real headless browser (tests/site/test_site.py)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  # The packages start system-wide services; the tests run their own
  # instances on loopback, so stop the system ones.
  $SUDO service dovecot stop >/dev/null 2>&1 || true
  $SUDO service postgresql stop >/dev/null 2>&1 || true
fi
