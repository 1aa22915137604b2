#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""The words of the tree describe the product as it is, not how or when it was made. In every
file of the checkout (code, build files, docs, tests; what git tracks, and new files it does
not ignore):

- no issue numbers: "issue 20", "issue #20", "item 1 of the issue";
- no words about how the work was organised: the lead, a CEO, tickets, work sessions,
  helpers as people, agents, worktrees, milestones;
- no dated run logs: no calendar date (2026-12-01, "1 December 2026"), no clock time with a
  zone ("00:48 UTC"), no "slow hour" of a run. Measurements and their dates belong in commit
  messages and in the generated sections of doc/performance.md;
- no commit ids in the docs (README.md, doc/*.md, tests/README.md): no word of 7 to 40 hex
  digits with a letter and a digit in it; nowhere, no word of 7 to 40 hex digits that names a
  commit of this repository (one in 70 short ids has no letter in it).

Not read: the stored benchmark results (doc/results/, data with their tree and date), the
generated sections of doc/performance.md (between its perf markers), binary files, and this
file (it spells the rules out). A date a test needs as data is written so that it does not
read as one (tests/unit/python/test_perfdoc.py builds its dates).
Usage: test_words.py SRCROOT."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

SELF = 'tests/house/test_words.py'
MONTH = r'(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?'
RULES = [
    ('issue number', re.compile(r'\bissues?\s*#?\s*\d+|\bitems? \d+ of (?:the|this) issue\b',
                                re.I)),
    ('how the work was organised', re.compile(
        r'\bthe lead\b|\bCEO\b|\btickets?\b|\bworktrees?\b|\bmilestones?\b|\b(?:sub)?agents?\b'
        r'|\b(?:another|other|fellow|sibling) (?:helper|session|agent)s?\b'
        r'|\bhelpers?\W(?:session|agent|branch|worktree)s?\b'
        r'|\b(?:this|that|previous|earlier|later|next|last|another|a) (?:work(?:ing)? )?session\b'
        r'|\bsession \d+\b|\bfiled by\b', re.I)),
    ('a dated run log', re.compile(
        r'\b20\d\d-[01]\d-[0-3]\d\b'
        r'|\b[0-2]?\d:[0-5]\d(?::[0-5]\d)? ?(?:UTC|GMT|CES?T|[+-][01]\d:?\d\d)\b'
        r'|\b(?:slow|slower|fast|faster|quiet|quieter|busy|busier) hours?\b'
        r'|\b' + MONTH + r' \d{1,2},? 20\d\d\b|\b\d{1,2} ' + MONTH + r',? 20\d\d\b', re.I)),
]
HEX_RE = re.compile(r'\b[0-9a-f]{7,40}\b')
PERF_BLOCK_RE = re.compile(r'^<!-- BEGIN perf:.*?^<!-- END perf:[^\n]*$', re.M | re.S)


def is_doc(path):
    return path in ('README.md', 'tests/README.md') or (
        path.startswith('doc/') and path.endswith('.md'))


def files(root):
    """The checkout's files (relative paths): git's list when root is a checkout."""
    try:
        out = subprocess.run(['git', '-C', root, 'ls-files', '-z', '--cached', '--others',
                              '--exclude-standard'], capture_output=True, check=True).stdout
        names = [n for n in out.decode().split('\0') if n]
    except (OSError, subprocess.CalledProcessError):
        names = []
        for d, dirs, fs in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith(('.git', 'build'))]
            names += [os.path.relpath(os.path.join(d, f), root) for f in fs]
    return sorted(n for n in set(names) if os.path.isfile(os.path.join(root, n)))


def commits(root, words):
    """The words that name a commit of the repository at root."""
    if not words:
        return set()
    try:
        out = subprocess.run(['git', '-C', root, 'cat-file', '--batch-check'],
                             input=''.join(w + '^{commit}\n' for w in words),
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return set()
    return {w for w, line in zip(words, out.splitlines()) if not line.endswith(' missing')}


def text_of(root, path):
    """The text the check reads, or None (binary, or not read)."""
    if path == SELF or path.startswith('doc/results/'):
        return None
    try:
        with open(os.path.join(root, path), 'rb') as f:
            data = f.read()
    except OSError:
        return None
    if b'\0' in data:
        return None
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return None
    if path == 'doc/performance.md':
        # Blank out the generated sections, keeping the line numbers.
        text = PERF_BLOCK_RE.sub(lambda m: '\n' * m.group(0).count('\n'), text)
    return text


def findings(root):
    """['path:line: what: "the words"'] for every rule broken in root."""
    out = []
    code_hex = {}
    for path in files(root):
        text = text_of(root, path)
        if text is None:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            for what, rule in RULES:
                for m in rule.finditer(line):
                    out.append('%s:%d: %s: "%s"' % (path, n, what, m.group(0)))
            for m in HEX_RE.finditer(line):
                word = m.group(0)
                if is_doc(path) and not word.isdigit() and not word.isalpha():
                    out.append('%s:%d: a commit id in a doc: "%s"' % (path, n, word))
                else:
                    code_hex.setdefault(word, []).append((path, n))
    for word in sorted(commits(root, sorted(code_hex))):
        for path, n in code_hex[word]:
            out.append('%s:%d: a commit id: "%s"' % (path, n, word))
    return sorted(out, key=lambda x: (x.split(':')[0], int(x.split(':')[1]), x))


class Words(unittest.TestCase):
    root = '.'

    def test_planted_lines_are_found(self):
        # Each rule fails on a planted line, in a scratch checkout with one commit.
        with tempfile.TemporaryDirectory() as d:
            def write(name, text):
                os.makedirs(os.path.dirname(os.path.join(d, name)), exist_ok=True)
                with open(os.path.join(d, name), 'w') as f:
                    f.write(text)
            git = ['git', '-C', d, '-c', 'user.name=t', '-c', 'user.email=t@t']
            env = dict(os.environ, GIT_AUTHOR_DATE='1700000000 +0000',
                       GIT_COMMITTER_DATE='1700000000 +0000')

            def run(*args):
                return subprocess.run(git + list(args), check=True, env=env,
                                      capture_output=True, text=True).stdout.strip()
            subprocess.run(['git', 'init', '-q', d], check=True)
            write('a.c', '/* clean */\n')
            run('add', '.')
            tree = run('write-tree')
            # A commit whose short id has no letter (one in 70 has none), then one
            # whose id has both: the check finds each, whatever its digits.
            ids = (run('commit-tree', tree, '-m', 'first %d' % i) for i in range(4000))
            digits = next(c for c in ids if c[:9].isdigit())
            lettered = run('commit-tree', tree, '-p', digits, '-m', 'second')
            run('update-ref', 'HEAD', lettered)
            write('a.c', '/* clean: the 0x1f2e3d4c mask, sha 9f86d08, 1234567 frames */\n'
                  '/* as issue 20 asked */\n/* fixed at %s */\n/* and at %s */\n'
                  % (digits[:9], lettered[:12]))
            write('tests/t.py', '# the lead said so; see ticket 4\n')
            write('README.md', 'Fast (measured 2026-12-01 00:49 UTC, a slow hour).\n'
                  'Since 3e4739e.\nMeasured on 1 December 2026. Item 1 of the issue.\n'
                  'The previous session and another helper.\nAfter %s, 1234567 frames.\n'
                  % digits[:7])
            write('doc/performance.md', '# p\n<!-- BEGIN perf:x: y -->\n- Date: 2026-12-01 '
                  '00:49 UTC\n<!-- END perf:x -->\nat 2026-12-02\n')
            write('doc/results/x.json', '{"date": "2026-12-01 00:49 UTC", "tree": "%s"}\n'
                  % digits)
            self.assertEqual(sorted(findings(d)), sorted([
                'README.md:1: a dated run log: "2026-12-01"',
                'README.md:1: a dated run log: "00:49 UTC"',
                'README.md:1: a dated run log: "slow hour"',
                'README.md:2: a commit id in a doc: "3e4739e"',
                'README.md:3: a dated run log: "1 December 2026"',
                'README.md:3: issue number: "Item 1 of the issue"',
                'README.md:4: how the work was organised: "previous session"',
                'README.md:4: how the work was organised: "another helper"',
                'README.md:5: a commit id: "%s"' % digits[:7],
                'a.c:2: issue number: "issue 20"',
                'a.c:3: a commit id: "%s"' % digits[:9],
                'a.c:4: a commit id: "%s"' % lettered[:12],
                'doc/performance.md:5: a dated run log: "2026-12-02"',
                'tests/t.py:1: how the work was organised: "the lead"',
                'tests/t.py:1: how the work was organised: "ticket"',
            ]))

    def test_tree_says_nothing_of_the_kind(self):
        out = findings(self.root)
        self.assertEqual(out, [], '\n' + '\n'.join(out))


if __name__ == '__main__':
    Words.root = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else '.')
    unittest.main(verbosity=2)
