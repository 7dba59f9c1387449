#!/usr/bin/env bash
# The Debian package: cpack builds it from this build tree, `dpkg -x` unpacks
# it into a scratch root, and the unpacked neodb finds its own plugin and the
# packaged default model (embed with no --model), prints --version, and the
# package carries the systemd unit and the default config.
# Usage: package_test.sh <build dir>
set -euo pipefail
build=$1
scratch=$(mktemp -d /tmp/neodb_pkg_XXXXXX)
trap 'rm -rf "$scratch"' EXIT
cpack --config "$build/CPackConfig.cmake" -B "$scratch/out" >"$scratch/cpack.log" 2>&1 ||
  { cat "$scratch/cpack.log"; exit 1; }
deb=$(ls "$scratch"/out/neodb_*.deb)
# Into a file, not a pipe: grep -q closing early would fail the pipeline (pipefail).
dpkg-deb --info "$deb" >"$scratch/info"
grep -q "Package: neodb" "$scratch/info"
dpkg -x "$deb" "$scratch/root"
for f in usr/bin/neodb usr/lib/neodb/libneodb_spm.so usr/share/neodb/default_model/config.json \
         lib/systemd/system/neodb.service etc/neodb/neodb.env \
         lib/systemd/system/neodb-nats.service etc/neodb/nats.conf; do
  [ -e "$scratch/root/$f" ] || { echo "package lacks $f"; exit 1; }
done
grep -q "^ExecStart=/usr/bin/neodb serve --data-dir /var/lib/neodb" \
  "$scratch/root/lib/systemd/system/neodb.service"
grep -q "^DynamicUser=yes" "$scratch/root/lib/systemd/system/neodb.service"
grep -q "^Before=neodb.service" "$scratch/root/lib/systemd/system/neodb-nats.service"
unset NEODB_DEFAULT_MODEL NEODB_SPM_PLUGIN
"$scratch/root/usr/bin/neodb" --version >"$scratch/version"
cat "$scratch/version"
grep -q "^neodb " "$scratch/version"
grep -q "^blas: " "$scratch/version"
# The loader's trace names the plugin file it opened: the unpacked one.
echo "hello world" | LD_DEBUG=files "$scratch/root/usr/bin/neodb" embed >"$scratch/embed" \
  2>"$scratch/ld"
grep -q "file=$scratch/root/usr/bin/../lib/neodb/libneodb_spm.so" "$scratch/ld" ||
  { echo "the unpacked neodb did not load its own plugin:"; grep spm "$scratch/ld"; exit 1; }
# One vector came out: a JSON line with numbers.
grep -Eq '^\[?.*[0-9]\.[0-9]' "$scratch/embed" || { echo "no embedding:"; cat "$scratch/embed"; exit 1; }
echo "package_test: OK ($(basename "$deb"))"
