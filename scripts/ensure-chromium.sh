#!/usr/bin/env bash
# Makes sure a Chromium is installed for the browser tests (test/browser),
# which drive it with playwright-core. Playwright's own browser downloads are
# not used: Debian's `chromium` package is. CHROMIUM_PATH names another
# binary (the tests read it too).
#
# Idempotent: when the browser is there it only checks and returns at once.
# Installs from the distribution (Debian/Ubuntu) as root, or through sudo.
set -euo pipefail

BROWSER=${CHROMIUM_PATH:-/usr/bin/chromium}
[ -x "$BROWSER" ] && exit 0

SUDO=()
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO=(sudo -n); fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: $BROWSER is missing and apt-get is not available; install Chromium by hand or set CHROMIUM_PATH" >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ] && [ ${#SUDO[@]} -eq 0 ]; then
  echo "ensure-chromium: installing chromium needs root (or sudo)" >&2
  exit 1
fi
echo "ensure-chromium: installing chromium" >&2
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
if [ ! -x "$BROWSER" ]; then
  echo "ensure-chromium: $BROWSER is still missing after the installation" >&2
  exit 1
fi
exit 0
