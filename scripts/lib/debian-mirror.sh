#!/usr/bin/env bash
# Prints the Debian archive this machine's apt uses, read from its own sources (deb822
# /etc/apt/sources.list.d/*.sources, or one-line /etc/apt/sources.list and *.list), so that
# the project's scripts reach Debian through whatever mirror the machine is set up with and
# name none themselves.
#
#   scripts/lib/debian-mirror.sh            the main archive's URI   (its suite has no "-security")
#   scripts/lib/debian-mirror.sh security   the security archive's URI (a suite ending "-security")
#
# Exits 1, saying so on stderr, when the sources name no such archive.
set -euo pipefail
want=${1:-main}
case "$want" in
main | security) ;;
*) echo "debian-mirror.sh: unknown archive '$want' (main or security)" >&2; exit 2 ;;
esac

# Every enabled "deb" source as "URI SUITE" lines, from both formats.
sources() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        # deb822: stanzas separated by blank lines; Types, URIs, Suites, Enabled fields.
        awk 'function flush() {
                 if (types ~ /(^| )deb( |$)/ && enabled != "no")
                     for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++) print u[i], s[j]
                 types = ""; enabled = ""; nu = 0; ns = 0
             }
             /^[ \t]*#/ { next }
             /^[ \t]*$/ { flush(); next }
             tolower($1) == "types:"   { types = ""; for (i = 2; i <= NF; i++) types = types " " $i; types = types " " }
             tolower($1) == "uris:"    { nu = 0; for (i = 2; i <= NF; i++) u[++nu] = $i }
             tolower($1) == "suites:"  { ns = 0; for (i = 2; i <= NF; i++) s[++ns] = $i }
             tolower($1) == "enabled:" { enabled = tolower($2) }
             END { flush() }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        # One-line: "deb [options] URI SUITE COMPONENT...".
        awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                           if (i + 1 <= NF) print $i, $(i + 1) }' "$f"
    done
}

uri=$(sources | awk -v want="$want" '
    { security = ($2 ~ /-security$/) }
    (want == "security" && security) || (want == "main" && !security) { print $1; exit }')
if [ -z "$uri" ]; then
    echo "debian-mirror.sh: this machine's apt sources name no Debian $want archive" >&2
    exit 1
fi
echo "${uri%/}"
