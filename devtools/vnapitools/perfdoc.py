# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""The one writer of doc/performance.md: every section of it is generated from a stored result
file, doc/results/<section>.json, so that anyone can regenerate the page and see which tree,
machine and command each table comes from.

A benchmark script, in three calls:

    from vnapitools import perfdoc
    meta = perfdoc.measurement('bench-matrix', cmdline)   # at the start: tree, date, machine
    ...                                                   # measure, build the markdown body
    perfdoc.publish(meta, body, intro=None, data=None)    # store the result, rewrite the page

- measurement(section_id, command, build=None): the run's provenance, a dict to keep (a
  script that can re-render an old run, e.g. from its --json file, stores it with its data and
  passes it back to publish()). command: the command as a user types it, from the checkout's
  top (`devtools/bench.py --matrix`). build: the build directory the run measures (the tree
  recorded is the one meson configured it from; default this checkout). Take it before
  measuring: the tree recorded is the one measured.
- publish(meta, body, intro=None, data=None, doc=None, results=None): writes
  results/<section>.json, then regenerates the page (every section, from every result file).
  body: markdown below the provenance list (a body that starts with '- ' continues the list,
  any other starts after a blank line; tables and '###' subsections are fine). intro: paragraphs
  between the heading and the list. data: anything JSON can hold that the script wants kept
  with the result (raw figures). Returns the section's text. doc: another page (its results
  go in the directory 'results' next to it, or in results). A smoke run sets
  VNAPI_PERFDOC_DIR=<scratch directory> in the environment instead: the page and the results
  of every script that is given no page go there, so that a short run never replaces a real
  result.
- preview(meta, body, intro=None): the section's text without writing anything (--no-doc).
- table(columns, rows, align=None): a markdown table; align is a string of 'l'/'r', one per
  column (default: left).
- load(section_id, results=RESULTS): a stored result (dict) or None.
- stored_run(result): the (data, meta) of a stored result, as publish() was given them (a
  script that re-renders a section from the page's own results/<section>.json).

A new benchmark adds its section to the registry below (_REGISTRY: id, heading, the command
that measures it; parsed into perfdoc.SECTIONS); the page shows the sections in that order. A
section without a result file says "Not measured at this tree: run `COMMAND`". From a shell
script (race_report.sh):

    meta=$(python3 -m vnapitools.perfdoc --measure race --command 'devtools/race_report.sh B')
    ... measure ...
    printf '%s' "$meta" | python3 -m vnapitools.perfdoc --publish - --body FILE [--intro TEXT]

Result file (JSON, one object, written by publish(); never edit it by hand):

    section      the section id (also the file's name)
    command      the exact command, from the checkout's top
    tree         the commit checked out when the run started (40 hex digits; null outside git)
    uncommitted  paths with uncommitted changes at that moment (modified tracked files and
                 untracked ones git does not ignore), [] for a clean tree
    datapath     sha256 over the files of the section's scope as measured (datapath_digest())
    date         'YYYY-MM-DD HH:MM UTC', the start of the run
    machine      {"cpu_model": /proc/cpuinfo's model name, "cpus": online CPUs,
                  "kernel": uname -r}
    intro, body  the markdown of the section (null intro: none)
    data         the script's own figures, or null

The datapath: the files in DATAPATH below, the code every benchmark here measures (what runs
for a packet or a wakeup, and the build options that compile it). Each section has a scope:
`pmd` for the sections whose processes run the driver without lib/napi and vnapi-fwd
(dpdk-testpmd, l3fwd-power, the vhost_pair program: PMD_DATAPATH, the datapath less
APP_DATAPATH), `all` for those that measure vnapi-fwd. A datapath change of a section is a
commit that changes a file of its scope. A table is stale when the files of its scope in the
checkout differ from the ones it was measured on (the result's digest over them; for a result
whose digest covers another scope, git's files of its tree, when its tree had no uncommitted
change in the scope): the house test `performance_page` then fails, naming the last datapath
commit of the scope, until the section is measured again or its result dropped
(`--drop-stale`, the section then says "not measured"). The test also fails when the page
differs from what regenerate() makes of the stored results (a hand edit between the markers),
and when a section of scope `pmd` names a script that starts vnapi-fwd, itself or through a
devtools module it imports at any depth (scope_problems(): the script reads the binary from
$VNAPI_FWD or joins its path to the build directory).

Command line (devtools/ on PYTHONPATH):

    python3 -m vnapitools.perfdoc --regenerate     rewrite the page from the result files
    python3 -m vnapitools.perfdoc --check          exit 1 when the page is not generated or a
                                                   table is stale (what the house test checks)
    python3 -m vnapitools.perfdoc --drop-stale     delete stale result files, regenerate

Python 3 standard library only.
"""

import argparse
import collections
import datetime
import fnmatch
import hashlib
import json
import os
import platform
import re
import subprocess
import sys

from vnapitools import procfs

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(TOP, 'doc', 'performance.md')
RESULTS = os.path.join(TOP, 'doc', 'results')
# A smoke run of a benchmark sets this to a scratch directory: the page is then
# DIR/performance.md and the results DIR/results (unless the script is given a page).
ENV_DIR = 'VNAPI_PERFDOC_DIR'
LOCK = 'flock /run/vnapi-cpu.lock '

# The datapath (paths from the checkout's top; '*' matches within a name): the rx and tx
# bursts, the rx interrupt arming, the gate every burst enters, the per-packet virtio-net
# header, the queue layout and the constants and defaults it is built with, the kick (the
# transport's notify op), lib/virtq and lib/napi, the forwarder the latency sections run, and
# the build options.
DATAPATH = (
    'drivers/net/vnapi/vnapi_rxtx*',
    'drivers/net/vnapi/vnapi_intr.*',
    'drivers/net/vnapi/vnapi_gate.*',
    'drivers/net/vnapi/vnapi_net_hdr.*',
    'drivers/net/vnapi/vnapi_dev.h',
    'drivers/net/vnapi/vnapi_devargs.h',
    'drivers/net/vnapi/vnapi_features.h',
    'drivers/net/vnapi/vnapi_transport.h',
    'drivers/net/vnapi/vnapi_transport_vhost_user.c',
    'drivers/net/vnapi/meson.build',
    'lib/virtq/*',
    'lib/napi/*',
    'app/vnapi-fwd/*',
    'config/*',
    'meson.build',
    'meson_options.txt',
)
# What only vnapi-fwd runs: the scope `pmd` leaves it out.
APP_DATAPATH = ('lib/napi/*', 'app/vnapi-fwd/*')
PMD_DATAPATH = tuple(p for p in DATAPATH if p not in APP_DATAPATH)
_SCOPES = {'pmd': PMD_DATAPATH, 'all': DATAPATH}

Section = collections.namedtuple('Section', 'id scope title command')

# The page's sections, in page order: id | scope (pmd, all: see the module doc;
# scope_problems() checks it) | heading | the command that measures it (as the "not measured"
# line shows it; its first devtools/ word names the script).
_REGISTRY = """
bench            | pmd | testpmd throughput: net_vnapi vs net_virtio_user |
                   LOCK devtools/bench.py
bench-matrix     | pmd | Benchmark matrix                       | LOCK devtools/bench.py --matrix
icount           | pmd | Instructions per packet hop (callgrind) |
                   devtools/icount.py --vu-explore --functions 12 --lock /run/vnapi-cpu.lock
bench-paired     | pmd | Paired throughput: net_vnapi vs net_virtio_user |
                   LOCK devtools/bench.py --paired
bench-aa         | pmd | Paired throughput, A/A: net_vnapi against itself |
                   LOCK devtools/bench.py --paired --aa
race             | pmd | Rx interrupt arming race               |
                   LOCK devtools/race_report.sh --doc build
l3fwd            | pmd | l3fwd-power interrupt mode             | LOCK devtools/l3fwd_report.py
latency-bench    | all | Latency benchmark: sparse, idle, hybrid vs interrupt |
                   LOCK devtools/latency_bench.py
latency-hybrid   | all | Hybrid vs interrupt under sparse traffic and host steal |
                   devtools/latency_bench.py --hybrid-pairs 60 --lock /run/vnapi-cpu.lock
napi-experiments | all | NAPI experiments                       | LOCK devtools/napi_experiments.py
napi-latency     | all | Latency at sparse load | LOCK devtools/napi_experiments.py --only latency
hybrid-bench     | all | Hybrid against poll, interrupt and l3fwd-power, pair by pair |
                   LOCK devtools/hybrid_bench.py
hybrid-curve     | all | Hybrid's one setting: CPU against p99 per load |
                   LOCK devtools/hybrid_bench.py --curve
soak             | all | Soak: vnapi-fwd under back-end kills and port restarts |
                   LOCK devtools/soak.py --minutes 10 --publish
"""
SECTIONS = tuple(
    Section(*(f.strip().replace('LOCK ', LOCK) for f in row.split('|')))
    for row in re.sub(r'\|\n\s+', '| ', _REGISTRY).strip().splitlines())
_BY_ID = {s.id: s for s in SECTIONS}

DATE_RE = re.compile(r'^\d{4}-\d\d-\d\d \d\d:\d\d UTC$')
HEX40_RE = re.compile(r'^[0-9a-f]{40}$')
HEX64_RE = re.compile(r'^[0-9a-f]{64}$')


def section(section_id):
    """The registered Section of section_id (ValueError for an unknown one)."""
    try:
        return _BY_ID[section_id]
    except KeyError:
        raise ValueError('unknown section %r: register it in perfdoc._REGISTRY (known: %s)'
                         % (section_id, ', '.join(_BY_ID))) from None


def scope(section_id):
    """The datapath patterns of section_id's scope."""
    return _SCOPES[section(section_id).scope]


def begin_marker(section_id):
    return ('<!-- BEGIN perf:%s: generated by devtools/vnapitools/perfdoc.py from '
            'doc/results/%s.json, edit outside these markers -->' % (section_id, section_id))


def end_marker(section_id):
    return '<!-- END perf:%s -->' % section_id


def now():
    """The date format of every result: UTC, to the minute."""
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')


# ---- the tree and the machine ----------------------------------------------------------------

def _git(top, *args):
    """git's stdout (bytes) in top, or None (no git, not a checkout, an error)."""
    try:
        r = subprocess.run(['git', '-C', top] + list(args), capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout if r.returncode == 0 else None


def _is_checkout(top):
    out = _git(top, 'rev-parse', '--show-toplevel')
    return out is not None and os.path.realpath(out.decode().strip()) == os.path.realpath(top)


def datapath_files(top=TOP, patterns=DATAPATH):
    """The files of the datapath (or of patterns) present in the tree top (relative paths,
    sorted): in a checkout, those git tracks or would track (untracked, not ignored); elsewhere
    every file."""
    if _is_checkout(top):
        out = _git(top, 'ls-files', '-z', '--cached', '--others', '--exclude-standard', '--',
                   *patterns)
        names = [n for n in out.decode().split('\0') if n] if out is not None else []
    else:
        names = []
        for d, _, files in os.walk(top):
            for f in files:
                names.append(os.path.relpath(os.path.join(d, f), top).replace(os.sep, '/'))
        names = [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns)]
    return sorted(n for n in set(names) if os.path.isfile(os.path.join(top, n)))


def _digest(lines):
    h = hashlib.sha256()
    for name, blob in sorted(lines):
        h.update(('%s %s\n' % (name, blob)).encode())
    return h.hexdigest()


def datapath_digest(top=TOP, patterns=DATAPATH):
    """sha256 over 'path git-blob-id' lines of the datapath files (or those of patterns) as
    they are in top's working tree (blob ids as git computes them, so a clean checkout of the
    same tree gives the same digest with or without git)."""
    lines = []
    for name in datapath_files(top, patterns):
        with open(os.path.join(top, name), 'rb') as f:
            data = f.read()
        lines.append((name, hashlib.sha1(b'blob %d\0' % len(data) + data).hexdigest()))
    return _digest(lines)


def tree_digest(top, commit, patterns=DATAPATH):
    """datapath_digest() of the files of patterns in commit, as git stores them; None without
    git or the commit."""
    out = _git(top, 'ls-tree', '-r', '-z', commit)
    if out is None:
        return None
    lines = []
    for entry in out.decode().split('\0'):
        if not entry:
            continue
        info, name = entry.split('\t', 1)
        if info.split()[1] == 'blob' and any(fnmatch.fnmatchcase(name, p) for p in patterns):
            lines.append((name, info.split()[2]))
    return _digest(lines)


def last_datapath_commit(top=TOP, patterns=DATAPATH):
    """'<hash> <subject>' of the newest commit that changed a datapath file (of patterns), or
    None."""
    out = _git(top, 'log', '-1', '--format=%h %s', '--', *patterns)
    return out.decode().strip() or None if out is not None else None


def source_of(build):
    """The source tree meson configured the build directory build from (else TOP)."""
    try:
        with open(os.path.join(build, 'meson-info', 'meson-info.json')) as f:
            return json.load(f)['directories']['source']
    except (OSError, KeyError, ValueError):
        return TOP


def measurement(section_id, command, top=None, build=None):
    """The provenance of a run about to measure section_id (see the module doc): of the tree
    top, else of the source tree of the build directory build, else of this checkout."""
    section(section_id)
    top = top or (source_of(build) if build else TOP)
    if not command or not command.strip():
        raise ValueError('perf:%s: the command is empty' % section_id)
    tree, uncommitted = None, []
    if _is_checkout(top):
        out = _git(top, 'rev-parse', 'HEAD')
        tree = out.decode().strip() if out else None
        out = _git(top, 'status', '--porcelain', '-z', '--untracked-files=all')
        entries = iter(out.decode().split('\0') if out else [])
        for e in entries:
            if len(e) > 3:
                uncommitted.append(e[3:])
                if e[0] in 'RC':
                    next(entries, None)  # a rename's or copy's source path
        uncommitted.sort()
    return {
        'section': section_id,
        'command': command.strip(),
        'tree': tree,
        'uncommitted': uncommitted,
        'datapath': datapath_digest(top, scope(section_id)),
        'date': now(),
        'machine': {'cpu_model': procfs.cpu_model(), 'cpus': os.cpu_count(),
                    'kernel': platform.release()},
    }


# ---- rendering -------------------------------------------------------------------------------

def table(columns, rows, align=None):
    """A markdown table: columns (header strings), rows (sequences of cells, str() each),
    align ('l'/'r' per column, default all 'l'). Ends without a newline."""
    align = align or 'l' * len(columns)
    if len(align) != len(columns) or any(len(r) != len(columns) for r in rows):
        raise ValueError('table: %d columns, align %r, row lengths %s'
                         % (len(columns), align, sorted({len(r) for r in rows})))
    cell = lambda x: str(x).replace('|', '\\|').replace('\n', ' ')  # noqa: E731
    lines = ['| %s |' % ' | '.join(cell(c) for c in columns),
             '|%s|' % '|'.join('---:' if a == 'r' else '---' for a in align)]
    lines += ['| %s |' % ' | '.join(cell(c) for c in r) for r in rows]
    return '\n'.join(lines)


def _tree_line(result):
    if not result['tree']:
        tree = 'not a git checkout'
    else:
        tree = '`%s`' % result['tree'][:12]
    unc = result.get('uncommitted') or []
    if unc:
        dp = [p for p in unc if any(fnmatch.fnmatchcase(p, d) for d in DATAPATH)]
        tree += ' + uncommitted changes to %d file%s (%s)' % (
            len(unc), 's' if len(unc) > 1 else '',
            'in the datapath: ' + ', '.join('`%s`' % p for p in dp) if dp
            else 'none in the datapath')
    return '- Tree: %s' % tree


def render_result(result):
    """A measured section's text, markers included, ending with a newline."""
    sec = section(result['section'])
    m = result['machine']
    lines = [begin_marker(sec.id), '## ' + sec.title, '']
    if result.get('intro'):
        lines += [result['intro'].strip('\n'), '']
    lines += [_tree_line(result),
              '- Date: %s' % result['date'],
              '- Machine: %s, %s CPUs, kernel %s' % (m['cpu_model'], m['cpus'], m['kernel']),
              '- Command: `%s`' % result['command']]
    body = (result.get('body') or '').lstrip('\n')
    if body and not body.startswith('- '):
        body = '\n' + body
    if body and not body.endswith('\n'):
        body += '\n'
    return '\n'.join(lines) + '\n' + body + end_marker(sec.id) + '\n'


def render_missing(section_id):
    """The text of a section without a stored result."""
    sec = section(section_id)
    return '%s\n## %s\n\nNot measured at this tree: run `%s`.\n%s\n' % (
        begin_marker(sec.id), sec.title, sec.command, end_marker(sec.id))


def preview(meta, body, intro=None):
    """The section publish() would write, without writing anything."""
    return render_result(dict(meta, body=body, intro=intro, data=None))


# ---- result files ----------------------------------------------------------------------------

def validate(result, section_id=None):
    """Raise ValueError naming the first field of a result that is missing or malformed."""
    def bad(what):
        raise ValueError('result %s: %s' % (result.get('section', section_id), what))
    if not isinstance(result, dict):
        bad('not a JSON object')
    for key in ('section', 'command', 'tree', 'uncommitted', 'datapath', 'date', 'machine',
                'body'):
        if key not in result:
            bad('no %r' % key)
    section(result['section'])
    if section_id is not None and result['section'] != section_id:
        bad('its file is named %s.json' % section_id)
    if not isinstance(result['command'], str) or not result['command'].strip():
        bad('empty command')
    if result['tree'] is not None and not HEX40_RE.match(str(result['tree'])):
        bad('tree %r is not a 40-digit commit id' % result['tree'])
    if not isinstance(result['uncommitted'], list):
        bad('uncommitted is not a list')
    if not HEX64_RE.match(str(result['datapath'])):
        bad('datapath %r is not a sha256' % result['datapath'])
    if not DATE_RE.match(str(result['date'])):
        bad('date %r is not YYYY-MM-DD HH:MM UTC' % result['date'])
    m = result['machine']
    if not isinstance(m, dict) or not m.get('cpu_model') or 'cpus' not in m or 'kernel' not in m:
        bad('machine needs cpu_model, cpus and kernel')
    if not isinstance(result['body'], str):
        bad('body is not a string')


def _write_atomic(path, text):
    tmp = '%s.tmp%d' % (path, os.getpid())
    with open(tmp, 'w') as f:
        f.write(text)
    os.rename(tmp, path)


def load(section_id, results=RESULTS):
    """The stored result of section_id, or None."""
    path = os.path.join(results, section_id + '.json')
    try:
        with open(path) as f:
            result = json.load(f)
    except FileNotFoundError:
        return None
    validate(result, section_id)
    return result


def stored_run(result):
    """The (data, meta) a stored result holds: what its script passed to publish() as data and
    the provenance measurement() gave it; (None, None) for a dict that is no stored result."""
    if not isinstance(result, dict) or 'section' not in result or 'body' not in result:
        return None, None
    return result.get('data'), {k: v for k, v in result.items()
                                if k not in ('intro', 'body', 'data')}


def load_all(results=RESULTS):
    """{section id: result} of every result file (ValueError for a file that is not one)."""
    out = {}
    if not os.path.isdir(results):
        return out
    for name in sorted(os.listdir(results)):
        if not name.endswith('.json'):
            raise ValueError('%s: only <section>.json files belong here' % name)
        out[name[:-5]] = load(name[:-5], results)
    return out


def paths(doc=None, results=None):
    """(page, results directory): the page is doc, else $VNAPI_PERFDOC_DIR/performance.md,
    else the checkout's doc/performance.md; the results are in results, else in the directory
    'results' next to the page."""
    scratch = os.environ.get(ENV_DIR)
    doc = doc or (os.path.join(scratch, 'performance.md') if scratch else DOC)
    return doc, results or os.path.join(os.path.dirname(os.path.abspath(doc)), 'results')


def publish(meta, body, intro=None, data=None, doc=None, results=None):
    """Store the result of a run (meta from measurement()) and regenerate the page."""
    doc, results = paths(doc, results)
    result = dict(meta, intro=intro, body=body, data=data)
    validate(result)
    os.makedirs(results, exist_ok=True)
    _write_atomic(os.path.join(results, result['section'] + '.json'),
                  json.dumps(result, indent=1, sort_keys=True, ensure_ascii=False,
                             default=str) + '\n')
    regenerate(doc, results)
    return render_result(result)


def report(meta, body, intro=None, data=None, dry=False, log=print):
    """A benchmark's ending: with @dry, print the section it would write; else store the
    result, regenerate the page, print the section and log where it went."""
    if dry:
        print(preview(meta, body, intro))
        return
    print(publish(meta, body, intro, data=data))
    log('published section %s (%s)' % (meta['section'], paths()[0]))


# ---- the page --------------------------------------------------------------------------------

def _find(lines, section_id):
    """(first, last + 1) line indices of the section's markers, or None."""
    begin = '<!-- BEGIN perf:%s:' % section_id
    start = next((i for i, ln in enumerate(lines) if ln.startswith(begin)), None)
    if start is None:
        return None
    end = next((i + 1 for i in range(start, len(lines))
                if lines[i].rstrip('\n') == end_marker(section_id)), None)
    if end is None:
        raise ValueError('section perf:%s has no end marker' % section_id)
    return start, end


def generate(text, results):
    """The page text with every registered section rendered from results ({id: result}; a
    missing one says "not measured"). Text outside the markers stays as it is; a section the
    page lacks goes after the registered section before it (or at the end)."""
    lines = text.splitlines(keepends=True)
    prev = None
    for sec in SECTIONS:
        new = (render_result(results[sec.id]) if sec.id in results
               else render_missing(sec.id)).splitlines(keepends=True)
        where = _find(lines, sec.id)
        if where is not None:
            lines[where[0]:where[1]] = new
        else:
            at = (_find(lines, prev) or (None, len(lines)))[1] if prev else len(lines)
            head, tail = lines[:at], lines[at:]
            while head and head[-1] == '\n':
                head.pop()
            while tail and tail[0] == '\n':
                tail.pop(0)
            lines = head + (['\n'] if head else []) + new + (['\n'] + tail if tail else [])
        prev = sec.id
    return ''.join(lines)


def regenerate(doc=DOC, results=RESULTS):
    """Rewrite doc from the result files; True when it changed."""
    try:
        with open(doc) as f:
            old = f.read()
    except FileNotFoundError:
        old = '# vnapi performance\n'
    new = generate(old, load_all(results))
    if new != old:
        _write_atomic(doc, new)
    return new != old


def stale(results=RESULTS, top=TOP):
    """[section id] of the stored results whose scope's files are not the tree top's."""
    out, digests = [], {}
    for sid, r in load_all(results).items():
        pats = scope(sid)
        if pats not in digests:
            digests[pats] = datapath_digest(top, pats)
        digest = digests[pats]
        if r['datapath'] == digest:
            continue
        # A digest over another scope: git has the files of the result's tree.
        dirty = any(fnmatch.fnmatchcase(u, p) for u in r['uncommitted'] for p in pats)
        if r['tree'] and not dirty and tree_digest(top, r['tree'], pats) == digest:
            continue
        out.append(sid)
    return out


# How a devtools script starts vnapi-fwd: it reads the binary's path from the environment
# runs.build_env() exports, or joins it to the build directory itself (runs.build_env's own
# table of paths is a dict entry, `'VNAPI_FWD': os.path.join(...)`, and does not match).
_STARTS_FWD_PY = re.compile(r"""env_path\(\s*'VNAPI_FWD'|environ(?:\.get\(|\[)\s*'VNAPI_FWD'"""
                            r"""|=\s*os\.path\.join\([^)]*'app',\s*'vnapi-fwd'""")
_STARTS_FWD_SH = re.compile(r'\$\{?VNAPI_FWD\b|app/vnapi-fwd/vnapi-fwd')
_IMPORT_RE = re.compile(r'^\s*(?:from\s+([\w.]+)\s+import\s+([\w, ]+)|import\s+([\w.]+))', re.M)


def _local_modules(path, text, devtools):
    """The devtools/ and devtools/vnapitools/ files that the Python file path imports, or that
    the shell script path names as devtools/NAME."""
    if path.endswith('.sh'):
        names = set(re.findall(r'devtools/([\w/]+\.(?:py|sh))', text))
        return [os.path.join(devtools, n) for n in sorted(names)
                if os.path.isfile(os.path.join(devtools, n))]
    names = set()
    for frm, what, imp in _IMPORT_RE.findall(text):
        mods = [imp] if imp else [frm] + ['%s.%s' % (frm, w.split()[0])
                                          for w in what.split(',') if w.strip()]
        names.update(m.replace('.', '/') + '.py' for m in mods)
    return [os.path.join(devtools, n) for n in sorted(names)
            if os.path.isfile(os.path.join(devtools, n))]


def starts_fwd(script, devtools=None):
    """[files] by which script (a devtools path), or a devtools module it imports at any depth,
    starts vnapi-fwd; empty when it does not."""
    devtools = devtools or os.path.join(TOP, 'devtools')
    seen, todo, found = set(), [os.path.join(devtools, script)], []
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        with open(f) as fh:
            text = fh.read()
        if (_STARTS_FWD_SH if f.endswith('.sh') else _STARTS_FWD_PY).search(text):
            found.append(os.path.relpath(f, os.path.dirname(devtools)))
        todo.extend(_local_modules(f, text, devtools))
    return sorted(found)


def script_of(section_id):
    """The devtools script section_id's command runs (the first devtools/ word), or None."""
    m = re.search(r'(?:^|\s)devtools/(\S+\.(?:py|sh))(?:\s|$)', section(section_id).command)
    return m.group(1) if m else None


def scope_problems(devtools=None):
    """[messages]: a section of scope pmd whose script starts vnapi-fwd (its table would stay
    current across a lib/napi or vnapi-fwd change that it measures)."""
    out = []
    for s in SECTIONS:
        script = script_of(s.id)
        if s.scope == 'pmd' and script is not None:
            via = starts_fwd(script, devtools)
            if via:
                out.append('perfdoc._REGISTRY: section %s has scope pmd, but devtools/%s starts '
                           'vnapi-fwd (%s): its scope is all' % (s.id, script, ', '.join(via)))
    return out


def problems(doc=DOC, results=RESULTS, top=TOP):
    """What --check and the house test report: [messages], empty when the page is right."""
    out = []
    with open(doc) as f:
        text = f.read()
    markers = re.findall(r'^<!-- (?:BEGIN|END) perf:([a-z0-9-]+)', text, re.M)
    for sid in sorted(set(markers)):
        if sid not in _BY_ID:
            out.append('%s: section perf:%s is not in perfdoc._REGISTRY' % (doc, sid))
        elif markers.count(sid) != 2:
            out.append('%s: perf:%s has %d markers, not one pair' % (doc, sid, markers.count(sid)))
    out += scope_problems()
    if out:
        return out
    if generate(text, load_all(results)) != text:
        out.append('%s differs from what the stored results generate (an edit between the '
                   'markers?): run python3 -m vnapitools.perfdoc --regenerate, and put '
                   'analysis outside the markers' % doc)
    for sid in stale(results, top):
        r = load(sid, results)
        dirty = _git(top, 'status', '--porcelain', '--', *scope(sid))
        last = ('uncommitted changes to %s' % ', '.join(sorted({ln[3:] for ln in
                                                               dirty.decode().splitlines()}))
                if dirty else 'last datapath commit: %s'
                % (last_datapath_commit(top, scope(sid)) or 'unknown'))
        out.append('perf:%s was measured at tree %s; the datapath changed since (%s): run '
                   '`%s`, or drop the result (python3 -m vnapitools.perfdoc --drop-stale)'
                   % (sid, (r['tree'] or 'unknown')[:12], last, section(sid).command))
    return out


def main():
    ap = argparse.ArgumentParser(description='The writer of doc/performance.md (see the '
                                 'module doc: python3 -m pydoc vnapitools.perfdoc).')
    ap.add_argument('--doc', help='the page (default: doc/performance.md, or in $%s)' % ENV_DIR)
    ap.add_argument('--results', help='the result files\' directory (default: doc/results, '
                    'or in $%s)' % ENV_DIR)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument('--regenerate', action='store_true', help='rewrite the page')
    g.add_argument('--check', action='store_true', help='exit 1 on a stale or hand-edited page')
    g.add_argument('--drop-stale', action='store_true', help='delete stale results, regenerate')
    g.add_argument('--measure', metavar='ID', help='print the provenance of a run of ID (JSON)')
    g.add_argument('--publish', metavar='META', help='store a result: META is the JSON that '
                   '--measure printed (a file, or - for standard input)')
    ap.add_argument('--command', help='with --measure: the command, from the checkout\'s top')
    ap.add_argument('--build', help='with --measure: the build directory measured (its source '
                    'tree is the tree recorded)')
    ap.add_argument('--body', help='with --publish: the markdown body (a file)')
    ap.add_argument('--intro', help='with --publish: paragraphs before the provenance list')
    a = ap.parse_args()
    a.doc, a.results = paths(a.doc, a.results)
    top = TOP if os.environ.get(ENV_DIR) else os.path.dirname(os.path.dirname(
        os.path.abspath(a.doc)))
    if a.regenerate:
        print('%s %s' % (a.doc, 'rewritten' if regenerate(a.doc, a.results) else 'unchanged'))
    elif a.check:
        out = problems(a.doc, a.results, top)
        for msg in out:
            print(msg)
        return 1 if out else 0
    elif a.drop_stale:
        for sid in stale(a.results, top):
            os.unlink(os.path.join(a.results, sid + '.json'))
            print('dropped perf:%s' % sid)
        regenerate(a.doc, a.results)
    elif a.measure:
        if not a.command:
            ap.error('--measure needs --command')
        print(json.dumps(measurement(a.measure, a.command, None if a.build else top, a.build),
                         sort_keys=True))
    else:
        if not a.body:
            ap.error('--publish needs --body')
        with (sys.stdin if a.publish == '-' else open(a.publish)) as f:
            meta = json.load(f)
        with open(a.body) as f:
            body = f.read()
        publish(meta, body, a.intro, None, a.doc, a.results)
        print('wrote perf:%s' % meta['section'])
    return 0


if __name__ == '__main__':
    sys.exit(main())
