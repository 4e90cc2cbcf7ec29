#!/usr/bin/env bash
# The steps of the composite GitHub Action (action.yml) but the upload, runnable anywhere: install the kit into a
# virtualenv of its own (never the system Python: PEP 668 systems refuse that), run it against a catalog that is
# already up (this starts nothing), and exit with the kit's exit code, which --ctk-fail-on decides
# (docs/verdicts.md). tests/test_action.py runs it as the action does.
#
# Inputs (the action's inputs, as environment variables):
#   CTK_CATALOG_URL  required: the catalog under test, e.g. http://127.0.0.1:8181
#   CTK_OPTIONS      further `ctk run` options, split on whitespace (no quoting), e.g. "--catalog-prefix p"
#   CTK_FAIL_ON      --ctk-fail-on statuses, e.g. "ci"; empty: the exit code counts fail and error only
#   CTK_KNOWN_GAPS   the catalog's known-gaps file (--ctk-known-gaps); empty: none
#   CTK_CERTIFY      "true": --ctk-certify (a certified run, else exit 8)
#   CTK_REPORTS      where the reports go (default ctk-reports)
#   CTK_INSTALL      what pip installs: default the kit in this script's repository (the action's own copy);
#                    a wheel, a "git+https://..." URL or a requirement; "none": the `ctk` already on PATH
#   CTK_VENV         the virtualenv (default $RUNNER_TEMP/ctk-venv, else ./.ctk-venv)
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
: "${CTK_CATALOG_URL:?set CTK_CATALOG_URL, the catalog-url input of the action: the catalog under test}"
reports=${CTK_REPORTS:-ctk-reports}
install=${CTK_INSTALL:-$here}
if [ "$install" != none ]; then
  venv=${CTK_VENV:-${RUNNER_TEMP:-$PWD}/ctk-venv}
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" || { echo "ctk action: cannot create a virtualenv at $venv (Debian/Ubuntu: apt-get install python3-venv)" >&2; exit 2; }
  fi
  echo "ctk action: pip installs $install into $venv (a line per package)"
  "$venv/bin/python" -m pip install --disable-pip-version-check --progress-bar off "$install" || exit 2
  PATH="$venv/bin:$PATH"
fi
args=(run --catalog-url "$CTK_CATALOG_URL" --ctk-reports "$reports")
if [ -n "${CTK_FAIL_ON:-}" ]; then
  args+=(--ctk-fail-on "$CTK_FAIL_ON")
fi
if [ -n "${CTK_KNOWN_GAPS:-}" ]; then
  args+=(--ctk-known-gaps "$CTK_KNOWN_GAPS")
fi
if [ "${CTK_CERTIFY:-false}" = true ]; then
  args+=(--ctk-certify)
fi
read -r -a extra <<< "${CTK_OPTIONS:-}"
echo "ctk action: ctk ${args[*]} ${extra[*]+${extra[*]}}"
ctk "${args[@]}" ${extra[@]+"${extra[@]}"}
status=$?
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  { echo "exit-code=$status"; echo "reports=$reports"; } >> "$GITHUB_OUTPUT"
fi
exit "$status"
