#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Count meson test results over one or more testlog.json files and print
the closing line CI reads: 'N passed, N failed[, N skipped]'.
An argument --failed=WHAT counts one failure that is no meson test (WHAT
could not be built, so its tests never ran)."""

import json
import sys


def main(paths):
    passed = failed = skipped = 0
    for path in paths:
        if path.startswith("--failed="):
            failed += 1
            print(f"FAILED: {path[len('--failed='):]}")
            continue
        try:
            with open(path, encoding="utf-8") as f:
                lines = [json.loads(line) for line in f if line.strip()]
        except OSError as e:
            print(f"summary: {path}: {e}", file=sys.stderr)
            failed += 1
            continue
        for t in lines:
            result = t.get("result")
            if result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:
                failed += 1
                print(f"FAILED: {t.get('name')} ({result})")
    line = f"{passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    print(line)
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
