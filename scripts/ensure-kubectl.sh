#!/usr/bin/env bash
# Makes `kubectl` available and prints its path (the k8s manifest test renders the kustomize base
# with `kubectl kustomize`, which needs no cluster). Already on PATH: print it. Otherwise, as root
# on Debian/Ubuntu, install it with apt — Debian ships kubectl in the `kubernetes-client` package.
# Anything else exits non-zero with the reason on stderr. Idempotent; prints only the path.
#
#   bash scripts/ensure-kubectl.sh
set -euo pipefail

fail() {
  echo "ensure-kubectl: $*" >&2
  exit 1
}

if path=$(command -v kubectl); then
  echo "$path"
  exit 0
fi

manual="install kubectl yourself (Debian: 'apt-get install kubernetes-client'; others: https://kubernetes.io/docs/tasks/tools/) and put it on PATH"
[ "$(id -u)" = 0 ] || fail "kubectl is not on PATH and installing it needs root; $manual"
command -v apt-get >/dev/null 2>&1 || fail "kubectl is not on PATH and there is no apt-get here; $manual"

# First package with an installable version; `kubectl` is the name in Kubernetes' own apt repo.
pick_package() {
  local pkg candidate
  for pkg in kubernetes-client kubectl; do
    candidate=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ { print $2 }')
    if [ -n "$candidate" ] && [ "$candidate" != "(none)" ]; then
      echo "$pkg"
      return 0
    fi
  done
  return 1
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

if ! pkg=$(pick_package); then
  # Empty or stale package lists (fresh containers ship none).
  apt-get update >"$log" 2>&1 || fail "apt-get update failed (no network?): $(tail -n 3 "$log" | tr '\n' ' ')"
  pkg=$(pick_package) || fail "no apt package provides kubectl (tried kubernetes-client, kubectl); $manual"
fi

DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$pkg" >"$log" 2>&1 ||
  fail "apt-get install $pkg failed: $(tail -n 3 "$log" | tr '\n' ' ')"

hash -r
path=$(command -v kubectl) || fail "installed $pkg but kubectl is still not on PATH"
echo "$path"
