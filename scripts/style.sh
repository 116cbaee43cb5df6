#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# style.sh: the style checks of STYLE.md section 9, as TAP on stdout.
#   checkpatch --strict over kmod/*.[ch] (and kmod/selftest/), kmod/compat/*.[ch] and
#   userspace/*.[ch], with --codespell when the dictionary is installed,
#   plus the rule that LINUX_VERSION_CODE appears nowhere in kmod/ (the
#   version facts no header tells live in kmod/compat/Kbuild.include,
#   which compat.h turns into helpers), that the CLI examples of
#   README.md and docs/tcptw.8 are those of docs/examples/, that
#   selftests/README.md has a row for every selftests/tcptw_*.sh and none
#   for a script that is gone, with no count of scripts there or in
#   README.md to drift, that the counters are the same in kmod/,
#   userspace/ and the docs (check-counters.py), and that sparse (C=2) finds nothing in the module built for the default
#   kernel (in .cache/build/sparse-K/, apart from the build make check
#   loads into its guests), and that this module calls none of the
#   functions tcptw hooks (its ftrace callbacks take no recursion guard).
#   And shellcheck (severity warning, settings in .shellcheckrc) over the
#   shell of selftests/, scripts/ and .ci/run.
#   Userspace ignores only the two types that demand kernel-only spellings
#   (u64, __printf).
# A repo-root .checkpatch.conf, if any, is read by checkpatch itself.
# Exit status: 0 iff every test passed.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${TCPTW_CACHE:-$REPO/.cache}
cd "$REPO"

checkpatch=$(scripts/get-checkpatch.sh) || {
	echo "1..1"
	echo "not ok 1 - get checkpatch"
	exit 1
}
cp_opts=(--no-tree --strict --show-types --color=never --quiet)
for dict in /usr/share/codespell/dictionary.txt \
	/usr/lib/python3/dist-packages/codespell_lib/data/dictionary.txt; do
	if [ -f "$dict" ]; then
		cp_opts+=(--codespell --codespellfile "$dict")
		break
	fi
done

n=0
failed=0
diag() { sed 's/^/# /'; }
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

# checkpatch_files NAME PATTERN... -- EXTRA_OPTS...
checkpatch_files() {
	local name=$1 files=() extra=() out
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		[ -e "$1" ] && files+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	extra=("$@")
	if [ ${#files[@]} -eq 0 ]; then
		skip "$name" "no files"
		return
	fi
	if out=$("$checkpatch" "${cp_opts[@]}" "${extra[@]}" -f "${files[@]}" 2>&1); then
		ok "$name"
	else
		diag <<<"$out"
		not_ok "$name"
	fi
}

# checkpatch --strict drops a CamelCase cache file into the cwd when it
# sees .git; it is useless without a kernel tree, so don't leave it around.
trap 'rm -f .checkpatch-camelcase.*' EXIT

echo "1..10"
shopt -s nullglob
checkpatch_files "checkpatch kmod" kmod/*.[ch] kmod/uapi/*.h kmod/selftest/*.c
checkpatch_files "checkpatch kmod/compat" kmod/compat/*.[ch]
# Userspace has no u64/__printf: the kernel-only spellings can't apply there.
checkpatch_files "checkpatch userspace" userspace/*.[ch] -- \
	--ignore PREFER_KERNEL_TYPES,PREFER_DEFINED_ATTRIBUTE_MACRO

if out=$(git grep -n LINUX_VERSION_CODE -- kmod); then
	diag <<<"$out"
	not_ok "no LINUX_VERSION_CODE in kmod"
else
	ok "no LINUX_VERSION_CODE in kmod"
fi

# README.md and docs/tcptw.8 show real examples, those captured in
# docs/examples/ (make examples).
if out=$(python3 scripts/gen-examples.py --check 2>&1); then
	ok "CLI examples in README and man page match docs/examples"
else
	diag <<<"$out"
	not_ok "CLI examples in README and man page match docs/examples"
fi

# The selftests index: a row per script, no row for a script that is gone,
# and no "N of N scripts" to drift as scripts come and go.
docs_index() {
	local f b rc=0

	for f in selftests/tcptw_*.sh; do
		b=${f#selftests/}
		if ! grep -qF "| \`$b\` |" selftests/README.md; then
			echo "selftests/README.md: no row for $b"
			rc=1
		fi
	done
	while read -r b; do
		if [ ! -e "selftests/$b" ]; then
			echo "selftests/README.md: a row for $b, which does not exist"
			rc=1
		fi
	done < <(grep -o '^| `[^`]*\.sh`' selftests/README.md | tr -d '|` ')
	if grep -nEi '\b[0-9]+ (of [0-9]+ )?(selftest |test )?scripts\b' \
		README.md selftests/README.md; then
		echo "a count of scripts: it drifts, say what runs instead"
		rc=1
	fi
	return $rc
}
if out=$(docs_index 2>&1); then
	ok "selftests/README.md indexes every selftest, no script counts"
else
	diag <<<"$out"
	not_ok "selftests/README.md indexes every selftest, no script counts"
fi

# The counters are written once (kmod/uapi/tcptw_counters.h) and the docs
# follow them (scripts/check-counters.py); and that check fails on a copy
# whose proc-format.md lost a counter, on one whose list gained a counter
# or an event type the docs do not describe, and on one with a name
# written by hand in C, so that it can fail at all.
counters_agree() {
	local tmp rc=0 what

	python3 scripts/check-counters.py || rc=1
	for what in doc header c event; do
		tmp=$(mktemp -d) || return 1
		cp -a kmod userspace docs "$tmp/"
		case $what in
		doc)
			grep -v '^| `TwKilledByRst` |' docs/proc-format.md \
				>"$tmp/docs/proc-format.md" ;;
		header)
			sed -i '0,/^TCPTW_COUNTER(/s//TCPTW_COUNTER(TW_NEW, "TwNew", "hook", "new")\n&/' \
				"$tmp/kmod/uapi/tcptw_counters.h" ;;
		c)
			echo 'static const char *n = "TwAckSent";' >>"$tmp/userspace/prom.c" ;;
		event)
			sed -i '0,/^TCPTW_EVENT(/s//TCPTW_EVENT(NEW, "new")\n&/' \
				"$tmp/kmod/uapi/tcptw_events.h" ;;
		esac
		if python3 scripts/check-counters.py --repo "$tmp" >/dev/null; then
			echo "check-counters.py passed a copy changed by \"$what\""
			rc=1
		fi
		rm -rf "$tmp"
	done
	return $rc
}
if out=$(counters_agree 2>&1); then
	ok "counters: written once, docs follow ($(tail -n 1 <<<"$out"))"
else
	diag <<<"$out"
	not_ok "counters: written once, docs follow"
fi

# the shell: selftests, VM runner, CI
if ! command -v shellcheck >/dev/null; then
	skip "shellcheck selftests scripts .ci" "shellcheck not installed (scripts/deps.sh installs it)"
elif out=$(shellcheck -x -S warning -f gcc selftests/*.sh scripts/*.sh .ci/run 2>&1); then
	ok "shellcheck selftests scripts .ci"
else
	diag <<<"$out"
	not_ok "shellcheck selftests scripts .ci"
fi

# sparse over the module, on the default kernel's headers
k=${KERNEL:-6.1}
if out=$(scripts/build-kmod.sh "$k" "$CACHE/build/sparse-$k" C=2 2>&1); then
	ok "sparse (C=2) kmod for $k"
else
	diag <<<"$out"
	not_ok "sparse (C=2) kmod for $k"
fi

# tcptw's ftrace callbacks disable preemption and take no recursion
# guard (kmod/compat/hook_ftrace.c): sound only while nothing in the
# module calls a function it hooks. Every name a probe table or compat.h
# gives, against the functions the module calls.
hooked_called() {
	local ko=$CACHE/build/sparse-$k/tcptw.ko names

	[ -e "$ko" ] || { echo "no $ko"; return 1; }
	names=$( { grep -ohE '\.name = "[A-Za-z0-9_:]+"' kmod/*.c kmod/compat/*.c |
			sed -E 's/.*"(.*:)?([^"]+)"/\2/'
		grep -ohE '^#define TCPTW_COMPAT_[A-Z_]+[[:space:]]+"[a-z0-9_]+"' \
			kmod/compat/*.h | sed -E 's/.*"([^"]+)"/\1/'; } | sort -u)
	[ "$(wc -l <<<"$names")" -ge 10 ] || { echo "found only: $names"; return 1; }
	if nm -u "$ko" | awk '{ print $2 }' | grep -xF "$names"; then
		echo "tcptw.ko calls the functions above, which it hooks"
		return 1
	fi
}
if out=$(hooked_called 2>&1); then
	ok "tcptw.ko calls no function it hooks"
else
	diag <<<"$out"
	not_ok "tcptw.ko calls no function it hooks"
fi

[ $failed -eq 0 ]
