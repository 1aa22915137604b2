#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# Check the format of commit messages (doc/contributing.md, "Commits"):
#   - subject "area: what changed": an area (lowercase words, digits, '.',
#     '/', '_', '-', ',' and spaces) then ': ' then the change, at most 60
#     characters, no trailing full stop or space;
#   - the second line blank, then a body of at least one line that says
#     why (and carries the figures), every line at most 72 characters
#     (a line that is one unbreakable word, such as a path or a URL, may be
#     longer);
#   - no trailing whitespace, no tabs in the subject.
#
# Usage: devtools/check-git-log.sh [REV-RANGE]
#   Without a range: every commit after the one that added this script
#   (history before it is not rewritten), up to HEAD. With a range (e.g.
#   origin/main..HEAD): those commits. Prints one line per problem and
#   "N commits checked, N bad"; exit 0 when none is bad, 1 otherwise, 2 when
#   the range cannot be read.
set -uo pipefail

top=$(git -C "$(dirname "$0")" rev-parse --show-toplevel 2>/dev/null) || {
    echo "check-git-log: not in a git checkout" >&2
    exit 2
}
cd "$top" || exit 2

if [ $# -gt 0 ]; then
    range=$1
else
    # The commit that added this script: the base. A shallow clone that
    # lacks it checks what it has.
    base=$(git log --diff-filter=A --format=%H -- devtools/check-git-log.sh | tail -n 1)
    if [ -z "$base" ]; then
        echo "check-git-log: the commit that added devtools/check-git-log.sh is not in this history" >&2
        exit 2
    fi
    range="$base^..HEAD"
    git rev-parse -q --verify "$base^" >/dev/null || range=$base
fi

commits=$(git rev-list --reverse "$range" 2>/dev/null) || {
    echo "check-git-log: cannot read the range '$range'" >&2
    exit 2
}

subject_max=60
body_max=72
checked=0
bad=0

# check_message SHA: print the problems of one commit's message.
check_message() {
    local sha=$1 short msg subject second nlines n=0 line problems=()
    short=$(git rev-parse --short "$sha")
    msg=$(git log -1 --format=%B "$sha")
    subject=$(printf '%s\n' "$msg" | sed -n 1p)
    second=$(printf '%s\n' "$msg" | sed -n 2p)
    nlines=$(printf '%s\n' "$msg" | sed '/^$/d' | wc -l)

    if [ ${#subject} -gt $subject_max ]; then
        problems+=("subject is ${#subject} characters (at most $subject_max)")
    fi
    if ! [[ $subject =~ ^[a-z0-9][a-z0-9._/,\ -]*:\ [^\ ] ]]; then
        problems+=("subject is not 'area: what changed' (a lowercase area, ': ', the change)")
    fi
    if [[ $subject =~ [.\ ]$ ]]; then
        problems+=("subject ends with a full stop or a space")
    fi
    if [[ $subject == *$'\t'* ]]; then
        problems+=("subject contains a tab")
    fi
    if [ -n "$second" ]; then
        problems+=("line 2 is not blank")
    fi
    if [ "$nlines" -lt 2 ]; then
        problems+=("no body: say why, with the figures")
    fi
    while IFS= read -r line; do
        n=$((n + 1))
        [ $n -le 2 ] && continue
        if [ ${#line} -gt $body_max ] && [[ $line == *" "* ]]; then
            problems+=("body line $n is ${#line} characters (at most $body_max): '${line:0:40}...'")
        fi
        if [[ $line =~ [[:space:]]$ ]]; then
            problems+=("body line $n ends with whitespace")
        fi
    done <<<"$msg"

    if [ ${#problems[@]} -gt 0 ]; then
        local p
        for p in "${problems[@]}"; do
            printf '%s "%s": %s\n' "$short" "${subject:0:50}" "$p"
        done
        return 1
    fi
    return 0
}

for c in $commits; do
    checked=$((checked + 1))
    check_message "$c" || bad=$((bad + 1))
done
echo "$checked commits checked, $bad bad"
[ $bad -eq 0 ]
