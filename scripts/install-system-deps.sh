#!/usr/bin/env bash
# Debian packages the tests need, each installed only when missing:
#   bubblewrap        the Linux sandbox backend;
#   chromium          the headless browser the /ui/ context page is tested in;
#   nodejs npm        openapi-typescript and tsc type-check a client generated from docs/openapi.json.
# Never fails the run when it cannot install (the sandbox then reports "unavailable", exactly as
# the spec describes; the browser and TypeScript tests then fail loudly, naming what is missing).
set -u
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${missing[*]} (Debian packages) ..." >&2
  apt-get update -qq >/dev/null 2>&1 || true
  for package in "${missing[@]}"; do
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$package" \
      >/dev/null 2>&1 || echo "warning: could not install $package" >&2
  done
else
  echo "warning: missing ${missing[*]} and cannot install here (need root + apt-get)" >&2
fi
exit 0
