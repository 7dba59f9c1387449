#!/usr/bin/env bash
# The PyPI packages some tests use (tools/python_test_requirements.txt: the
# official `openai` client, schemathesis, the h2 HTTP/2 library) into a venv
# of their own, $NEODB_PYTEST_VENV (default /opt/neodb-pytest/venv), never the
# system Python. --system-site-packages so that the venv also sees Debian's
# grpcio and protobuf, which the neodb client (clients/python) uses. A stamp (the
# requirements file's contents) makes a re-run with nothing changed a no-op.
# Called by tools/install_deps.sh; tests that need the venv find it by the same
# variable and fail naming this script when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${NEODB_PYTEST_VENV:-/opt/neodb-pytest/venv}
REQ=tools/python_test_requirements.txt
STAMP="$VENV/.requirements"
if [ -f "$STAMP" ] && cmp -s "$STAMP" "$REQ" && [ -x "$VENV/bin/python" ]; then
  echo "install_python_test_deps: present: $VENV"
  exit 0
fi
if [ "$(id -u)" -ne 0 ] && [ ! -w "$(dirname "$VENV")" ]; then SUDO=sudo; else SUDO=; fi
echo "install_python_test_deps: installing $REQ ($(grep -c '^[A-Za-z]' "$REQ") pinned packages) into $VENV"
$SUDO mkdir -p "$(dirname "$VENV")"
[ -x "$VENV/bin/pip" ] || $SUDO /usr/bin/python3 -m venv --system-site-packages "$VENV"
$SUDO "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQ"
$SUDO cp "$REQ" "$STAMP"
echo "install_python_test_deps: ready: $VENV"
