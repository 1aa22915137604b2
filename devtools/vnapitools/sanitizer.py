# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Sanitizer reports in the output of the processes a test starts.

ASan writes its reports to the files of log_path (devtools/sanitized.py
sets it), but GCC's UBSan, in a process that also has ASan, always writes
to the process's stderr, which the test scripts capture. Every reader of a
child's output passes each line to scan(): when devtools/sanitized.py runs
the test (VNAPI_SANITIZER_DIR set), a report's first line and its stack
frames are appended to a file of that directory, so the wrapper fails the
test whatever the test itself concluded. Without it, scan() does nothing.
"""

import os
import re

# The first line of a report: UBSan's 'file:line:col: runtime error: ...', and ASan's or
# UBSan's '==pid==ERROR: ...Sanitizer' when they reach stderr anyway.
REPORT_RE = re.compile(r'runtime error: |^==\d+==ERROR: \w*Sanitizer|^SUMMARY: \w*Sanitizer')
FRAME_RE = re.compile(r'^\s+#\d+ ')
_DIR = os.environ.get('VNAPI_SANITIZER_DIR')
_in_report = {}


def scan(name, text):
    """Record the report lines among @text, lines of one output stream @name."""
    if not _DIR:
        return
    for line in text.splitlines():
        if REPORT_RE.search(line):
            _in_report[name] = True
        elif not (_in_report.get(name) and FRAME_RE.match(line)):
            _in_report[name] = False
            continue
        with open(os.path.join(_DIR, 'stderr.%d' % os.getpid()), 'a') as f:
            f.write('%s| %s\n' % (name, line))
