#!/usr/bin/env bash
# Makes sure OpenLDAP's slapd and the ldap-utils are installed, for the
# directory sign-in tests (test/plugins/auth-ldap), which start a private
# slapd of their own (test/helpers/slapd.ts) from a temporary folder.
#
# Idempotent: when everything is there it only checks and returns at once.
# Installs from the distribution (Debian/Ubuntu) as root, or through sudo.
# The packaged slapd service is not used: the tests need only the binary and
# the schema files. On Ubuntu, slapd's AppArmor profile confines it to the
# packaged paths, which would keep the tests' slapd from reading its
# temporary folder; when that profile is loaded, it is unloaded (test
# machines and CI only: do not run this script on a production host).
set -euo pipefail

need=(slapd slapadd slappasswd ldapadd ldapsearch)
SCHEMA_DIR=/etc/ldap/schema
PROFILE=/etc/apparmor.d/usr.sbin.slapd

SUDO=()
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO=(sudo -n); fi

missing() {
  for tool in "${need[@]}"; do
    command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || return 0
  done
  for schema in core cosine inetorgperson nis; do
    [ -f "$SCHEMA_DIR/$schema.schema" ] || return 0
  done
  return 1
}

confined() {
  [ -f "$PROFILE" ] && [ -d /sys/kernel/security/apparmor ] && command -v apparmor_parser >/dev/null 2>&1 || return 1
  "${SUDO[@]}" grep -q 'slapd' /sys/kernel/security/apparmor/profiles 2>/dev/null
}

if missing; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-slapd: slapd or ldap-utils are missing and apt-get is not available; install OpenLDAP (slapd, ldap-utils) by hand" >&2
    exit 1
  fi
  if [ "$(id -u)" -ne 0 ] && [ ${#SUDO[@]} -eq 0 ]; then
    echo "ensure-slapd: installing slapd needs root (or sudo)" >&2
    exit 1
  fi
  echo "ensure-slapd: installing slapd and ldap-utils" >&2
  # The package's configuration questions are answered with their defaults.
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slapd ldap-utils >/dev/null
  if missing; then
    echo "ensure-slapd: slapd or its schema files are still missing after the installation" >&2
    exit 1
  fi
fi

if confined; then
  echo "ensure-slapd: unloading slapd's AppArmor profile so that the tests' slapd may use its temporary folder" >&2
  "${SUDO[@]}" apparmor_parser -R "$PROFILE"
fi
exit 0
