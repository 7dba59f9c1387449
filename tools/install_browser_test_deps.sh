#!/usr/bin/env bash
# What the web console's browser test (tests/browser/console_test.mjs) needs:
# Debian's chromium (apt) and playwright-core from npm, pinned by the
# committed tests/browser/package-lock.json, installed with `npm ci` into
# $NEODB_BROWSER_DEPS (default /opt/neodb-browser), never into the source
# tree. Playwright's own browser download (`playwright install`) is never
# used: the test drives /usr/bin/chromium. A stamp (the lock file's contents)
# makes a re-run with nothing changed a no-op. Called by tools/install_deps.sh;
# the test finds the packages by the same variable and fails naming this
# script when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
if ! dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q "install ok installed"; then
  echo "install_browser_test_deps: installing chromium"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends chromium
fi
command -v npm >/dev/null || $SUDO apt-get install -y -q --no-install-recommends nodejs npm
DIR=${NEODB_BROWSER_DEPS:-/opt/neodb-browser}
LOCK=tests/browser/package-lock.json
if [ -f "$DIR/.lock" ] && cmp -s "$DIR/.lock" "$LOCK" && [ -d "$DIR/node_modules/playwright-core" ]; then
  echo "install_browser_test_deps: present: $DIR ($(/usr/bin/chromium --version 2>/dev/null))"
  exit 0
fi
echo "install_browser_test_deps: npm ci of tests/browser into $DIR"
$SUDO mkdir -p "$DIR"
$SUDO cp tests/browser/package.json "$LOCK" "$DIR/"
# PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: playwright-core downloads nothing on
# install; set anyway, so that no version of it ever tries.
(cd "$DIR" && $SUDO env PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
$SUDO cp "$LOCK" "$DIR/.lock"
echo "install_browser_test_deps: ready: $DIR ($(/usr/bin/chromium --version 2>/dev/null))"
