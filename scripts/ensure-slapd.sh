#!/usr/bin/env bash
# Makes sure OpenLDAP's slapd and the ldap-utils are installed, for the
# directory sign-in tests (test/plugins/auth-ldap), which start a private
# slapd of their own. Idempotent: when everything is there it only checks
# and returns at once. Installs from the distribution (Debian/Ubuntu) as root,
# or through sudo when not root. The packaged slapd service is never started
# or configured: the tests need only the binary and the schema files.
set -euo pipefail

need=(slapd slapadd slappasswd ldapadd ldapsearch)
SCHEMA_DIR=/etc/ldap/schema

missing() {
  for tool in "${need[@]}"; do
    command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || return 0
  done
  for schema in core cosine inetorgperson nis; do
    [ -f "$SCHEMA_DIR/$schema.schema" ] || return 0
  done
  return 1
}

if ! missing; then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-slapd: slapd or ldap-utils are missing and apt-get is not available; install OpenLDAP (slapd, ldap-utils) by hand" >&2
  exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=(sudo); else
    echo "ensure-slapd: installing slapd needs root (or sudo)" >&2
    exit 1
  fi
fi

echo "ensure-slapd: installing slapd and ldap-utils" >&2
# The package's own configuration prompts are answered with defaults; its
# service is not used (policy-rc.d keeps it from starting inside containers).
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends slapd ldap-utils >/dev/null

if missing; then
  echo "ensure-slapd: slapd or its schema files are still missing after the installation" >&2
  exit 1
fi
