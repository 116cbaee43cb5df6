#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# gen-examples.py [--check]: the CLI examples of docs/tcptw.8 (every
# command) and README.md (a tour: one per command family), all from the
# real output in docs/examples/*.txt that `make examples` captures in a
# guest (selftests/examples_vm.sh). Long outputs are abridged, each cut
# marked "...". --check changes nothing and exits 1 (with a diff) if either
# file is out of date.
#
# An example file: "# CAPTION", "$ tcptw ARGS", the output, "# exit status N".

import difflib
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXDIR = os.path.join(REPO, 'docs', 'examples')

# (file, how to abridge): None = whole; ('keep', regex) = lines matching
# regex (runs of others become one "..."); ('tail', n).
EXAMPLES = [
    ('stat', ('keep', r'^\S|^  Tw(Created|Overflow|PawsRejected|'
                      r'SynPawsRejected|SynSeqRejected|SynRecycled|AckSent|'
                      r'RstSent|KilledByRst) |'
                      r'^  TcpExt(TW|TWRecycled|TWKilled|PAWSActive|'
                      r'PAWSEstab) |^  (entries|max) |'
                      r'^  (tcp_timestamps|tcp_tw_reuse|ip_local_port_range_lo|'
                      r'ip_local_port_range_hi|tcp_max_tw_buckets) ')),
    ('watch', None),
    ('diagnose', None),
    ('events', ('tail', 6)),
    ('export', ('keep', r'^tcptw_module_loaded|'
                        r'tcptw_tw_syn_paws_rejected_total|'
                        r'tcptw_tw_reuse_denied_total|'
                        r'TcpExt_PAWSEstab_total|'
                        r'tcptw_peer_syn_paws_rejected_total|'
                        r'^# (HELP|TYPE) tcptw_(module_loaded|'
                        r'tw_syn_paws_rejected_total|tw_reuse_denied_total|'
                        r'netstat_TcpExt_PAWSEstab_total|'
                        r'peer_syn_paws_rejected_total) ')),
    ('peers', None),
    ('sockets', None),
    ('listeners', None),
    ('conntrack', None),
    ('run', None),
    ('no-module', None),
]

# The README's tour: counters, census, diagnose and run (the man page
# has every command), cut shorter than in the man page; a caption
# of its own where the file's leans on the example before it.
README_TOUR = [
    ('stat', ('keep', r'^(netns|tcptw counters|kernel MIBs|sysctls)|'
              r'^  Tw(PawsRejected|SynPawsRejected) |'
              r'^  TcpExtPAWSEstab |^  (tcp_timestamps|tcp_tw_reuse) ')),
    ('sockets', None, 'A client with 50 ephemeral ports and tcp_tw_reuse=0 '
                      'after 60 connects, in its netns'),
    ('diagnose', None),
    ('run', ('keep', r'^\{|^tcptw run|^netns|^  counters|'
             r'^    (TwReuseDeniedDisabled|ConnectPortExhausted) |'
             r'^  (TIME_WAIT sockets|conntrack entries)|^\[')),
]


def load(name, how, caption=None):
    """caption, command line, abridged output lines, exit status"""
    with open(os.path.join(EXDIR, name + '.txt')) as f:
        lines = f.read().rstrip('\n').split('\n')
    if (len(lines) < 3 or not lines[0].startswith('# ') or
            not lines[1].startswith('$ tcptw ') or
            not re.match(r'# exit status \d+$', lines[-1])):
        sys.exit(f'gen-examples: {name}.txt: not an example file')
    cmd, out = lines[1], lines[2:-1]
    caption = caption or lines[0][2:]
    status = int(lines[-1].split()[-1])
    if how and how[0] == 'tail' and len(out) > how[1]:
        out = ['...'] + out[-how[1]:]
    elif how and how[0] == 'keep':
        keep, cut = [], False
        for line in out:
            if re.search(how[1], line):
                keep.append(line)
                cut = False
            elif not cut:
                keep.append('  ...')
                cut = True
        out = keep
    return caption, cmd, out, status


def body(cmd, out, status):
    lines = [cmd] + out
    if status:
        lines += ['$ echo $?', str(status)]
    return lines


def markdown(examples):
    md = []
    for name, (caption, cmd, out, status) in examples:
        md += [f'{caption} (`docs/examples/{name}.txt`):', '', '```']
        md += body(cmd, out, status)
        md += ['```', '']
    return md[:-1]


def troff_escape(line):
    line = line.replace('\\', '\\e').replace('-', '\\-')
    if line.startswith(('.', "'")):
        line = '\\&' + line
    return line


def troff(examples):
    t = []
    for _, (caption, cmd, out, status) in examples:
        t += ['.PP', troff_escape(caption) + ':', '.PP', '.nf', '.RS']
        t += [troff_escape(x) for x in body(cmd, out, status)]
        t += ['.RE', '.fi']
    return t


def splice(path, begin, end, new):
    with open(path) as f:
        old = f.read().split('\n')
    try:
        b = old.index(begin)
        e = old.index(end, b)
    except ValueError:
        sys.exit(f'gen-examples: {path}: no "{begin}" ... "{end}" markers')
    return old, old[:b + 1] + new + old[e:]


def main():
    check = sys.argv[1:] == ['--check']
    if sys.argv[1:] and not check:
        sys.exit('usage: gen-examples.py [--check]')
    every = [(name, load(name, how)) for name, how in EXAMPLES]
    tour = [(t[0], load(t[0], t[1], *t[2:])) for t in README_TOUR]
    outputs = [
        (os.path.join(REPO, 'README.md'),) + splice(
            os.path.join(REPO, 'README.md'),
            '<!-- BEGIN EXAMPLES: scripts/gen-examples.py -->',
            '<!-- END EXAMPLES -->', [''] + markdown(tour) + ['']),
        (os.path.join(REPO, 'docs', 'tcptw.8'),) + splice(
            os.path.join(REPO, 'docs', 'tcptw.8'),
            '.\\" BEGIN EXAMPLES: scripts/gen-examples.py',
            '.\\" END EXAMPLES', troff(every)),
    ]

    stale = 0
    for path, old, new in outputs:
        if old == new:
            continue
        rel = os.path.relpath(path, REPO)
        if check:
            stale += 1
            sys.stdout.writelines(difflib.unified_diff(
                [x + '\n' for x in old], [x + '\n' for x in new],
                rel, rel + ' (from docs/examples)', n=1))
        else:
            with open(path, 'w') as f:
                f.write('\n'.join(new).rstrip('\n') + '\n')
            print(f'gen-examples: updated {rel}')
    if stale:
        print(f'gen-examples: {stale} file(s) out of date: '
              'run scripts/gen-examples.py')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
