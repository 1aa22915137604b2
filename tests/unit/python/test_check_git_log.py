# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""devtools/check-git-log.sh against a scratch repository: a good message
passes, each kind of bad one fails and is named, and commits before the one
that added the script are not checked."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
SCRIPT = os.path.join(TOP, 'devtools', 'check-git-log.sh')

# git run inside a rebase or a hook inherits GIT_DIR and friends: they would point
# this test's git init and config at the checkout running it.
ENV = {k: v for k, v in os.environ.items() if not k.startswith('GIT_')}

GOOD = ('napi: arm on an empty round after the window\n\n'
        'Short rounds no longer count as idle: any packet reloads the\n'
        'window. 32 frames in flight: 0.99 of poll mode.\n')


class CheckGitLog(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='vnapi-gitlog-')
        self.git('init', '-q')
        self.git('config', 'user.email', 't@example.org')
        self.git('config', 'user.name', 't')
        # history before the script: not checked, whatever its format
        self.commit('a.txt', 'An old subject that is far too long to pass the check of today, really')
        os.makedirs(os.path.join(self.dir, 'devtools'))
        shutil.copy(SCRIPT, os.path.join(self.dir, 'devtools', 'check-git-log.sh'))
        self.git('add', '.')
        self.git('commit', '-q', '-m', 'devtools: check the commit format\n\nWhy: so it stays.')

    def tearDown(self):
        shutil.rmtree(self.dir)

    def git(self, *args):
        return subprocess.run(['git', '-C', self.dir] + list(args), check=True, env=ENV,
                              capture_output=True, text=True).stdout

    def commit(self, name, msg):
        with open(os.path.join(self.dir, name), 'a') as f:
            f.write('x\n')
        self.git('add', name)
        self.git('commit', '-q', '--cleanup=verbatim', '-m', msg)

    def run_check(self):
        p = subprocess.run(['bash', os.path.join(self.dir, 'devtools', 'check-git-log.sh')],
                           capture_output=True, text=True, env=ENV)
        return p.returncode, p.stdout + p.stderr

    def test_good(self):
        self.commit('b.txt', GOOD)
        rc, out = self.run_check()
        self.assertEqual(rc, 0, out)
        self.assertIn('2 commits checked, 0 bad', out)

    def assert_bad(self, msg, words):
        self.commit('b.txt', msg)
        rc, out = self.run_check()
        self.assertEqual(rc, 1, out)
        self.assertIn('2 commits checked, 1 bad', out)
        self.assertIn(words, out)

    def test_long_subject(self):
        self.assert_bad('napi: ' + 'x' * 60 + '\n\nWhy.\n', 'characters (at most 60)')

    def test_no_area(self):
        self.assert_bad('Arm on an empty round\n\nWhy.\n', "not 'area: what changed'")

    def test_full_stop(self):
        self.assert_bad('napi: arm on an empty round.\n\nWhy.\n', 'full stop')

    def test_no_blank_line(self):
        self.assert_bad('napi: arm on an empty round\nWhy.\n', 'line 2 is not blank')

    def test_no_body(self):
        self.assert_bad('napi: arm on an empty round\n', 'no body')

    def test_long_body_line(self):
        self.assert_bad('napi: arm on an empty round\n\n' + 'word ' * 15 + '\n',
                        'characters (at most 72)')

    def test_long_word_allowed(self):
        self.commit('b.txt', 'napi: arm on an empty round\n\n' + 'x' * 90 + '\n')
        rc, out = self.run_check()
        self.assertEqual(rc, 0, out)


if __name__ == '__main__':
    unittest.main(argv=[sys.argv[0], '-v'])
