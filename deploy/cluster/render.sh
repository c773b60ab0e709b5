#!/bin/sh
# render.sh TEMPLATE ENV_FILE... : prints TEMPLATE with every ${VAR} replaced by its value from the
# env files (later files win), and fails naming any ${VAR} that none of them sets, instead of
# writing an empty value as a bare envsubst would. test/support/patroni.ts renders the templates
# by the same rule. Needs envsubst (Debian: gettext-base).
set -eu
[ $# -ge 2 ] || { echo "usage: $0 TEMPLATE ENV_FILE..." >&2; exit 2; }
template=$1; shift
set -a
for f in "$@"; do . "$(realpath "$f")"; done
set +a
vars=$(grep -o '\${[A-Z0-9_]*}' "$template" | sort -u)
for v in $vars; do
  name=${v#??}; name=${name%?}
  eval "set=\${$name+x}"
  [ -n "$set" ] || { echo "$template: $name is not set in $*" >&2; exit 1; }
done
envsubst "$vars" < "$template"
