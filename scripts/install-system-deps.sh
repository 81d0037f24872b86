#!/usr/bin/env bash
# Debian packages the tests need: bubblewrap for the Linux sandbox backend.
# Installs only what is missing; never fails the run when it cannot install (the sandbox then
# reports "unavailable", exactly as the spec describes, and the tests for that path still run).
set -u
if command -v bwrap >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing bubblewrap (Debian package) ..." >&2
  apt-get update -qq >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null 2>&1 || \
    echo "warning: could not install bubblewrap; the sandbox will report unavailable" >&2
else
  echo "warning: bwrap not found and cannot install it here (need root + apt-get)" >&2
fi
exit 0
