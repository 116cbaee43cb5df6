#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh [KERNEL...]: what `make check` runs (default kernel: 6.1; "all" =
# every name in `kernels.sh list`; the debug kernels, `kernels.sh
# list-debug`, only by name: KERNELS=6.1-debug). K:build builds tcptw.ko
# for K (W=1) without booting it. "ci" = what CI runs (.ci/run): the whole
# suite on one kernel per hook backend (CI_SUITE_KERNELS: 6.1 for ftrace,
# 7.2 for fprobes), the module built for the others, the packages' chroot
# test on both of theirs (docs/testing.md: "What CI runs").
#   1. scripts/deps.sh
#   2. make -C selftests (the C helpers), then per kernel: fetch, build
#      tcptw.ko in .cache/build/K, boot K and run selftests/run_vm.sh (KTAP)
#      in the background. Each kernel's scripts are split over VM_PARTS
#      one-vCPU guests (default 2, dealt by selftests/durations), plus one
#      two-vCPU guest for the scripts marked cpus:2 there; VM_JOBS
#      (default 2) guests run side by side, taking the VM slots in the
#      order started. In "ci", the scripts marked once there run on the
#      first suite kernel only.
#      Before the first build: scripts/cli-scale.sh (TAP; timed, so alone)
#   3. meanwhile: userspace unit tests, make -C userspace check (TAP)
#   4. meanwhile: scripts/style.sh, scripts/test-alerts.sh and
#      scripts/test-wire.py (TAP)
#   5. each kernel's results, in the order given.
#   6. the Debian packages (scripts/deb-test.sh, started after step 2, in
#      the background): make deb, install in a clean chroot of 6.1's and
#      5.10's suite, and the dkms-built module in a guest of its own,
#      running tcptw_nat_paws.sh, which K's own guests then leave out.
# Every ok / not ok / # SKIP line at the start of a line counts; a step that
# fails without reporting a result counts as one failure. Progress lines are
# prefixed with [step], so that only the last line is meant for parsers. All logs go to
# .cache/logs/. Prints a per-step table, then as the very last line
# "N passed, N failed, N skipped"; exits 0 iff nothing failed.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${TCPTW_CACHE:-$REPO/.cache}
LOGS=$CACHE/logs
cd "$REPO" || exit 1
mkdir -p "$LOGS"

total_p=0 total_f=0 total_s=0
rows=()
# current step
step="" sp=0 sf=0 ss=0

begin() { step=$1 sp=0 sf=0 ss=0; echo "== $step"; }
end() {
	rows+=("$(printf '%-22s %7d %7d %8d' "$step" "$sp" "$sf" "$ss")")
	total_p=$((total_p + sp)) total_f=$((total_f + sf)) total_s=$((total_s + ss))
}
pass() { sp=$((sp + 1)); echo "[$step] ok - $1"; }
fail() { sf=$((sf + 1)); echo "[$step] not ok - $1"; }
skip() { ss=$((ss + 1)); echo "[$step] ok - $1 # SKIP $2"; }

# show_tail N LOG: the end of a log, prefixed so that nothing in it looks
# like a result line
show_tail() { tail -n "$1" "$2" | sed "s/^/[$step] | /"; }

# show_oops LOG: the guest kernel's first report, as vng-run.sh put it in
# LOG (its vnglog_report), which a crashed guest's tail hides
show_oops()
{
	sed -n "/^vng-run.sh: the guest kernel's first report:/,+46p" "$1" |
		sed "s/^/[$step] | /"
}

# qemu_int3 LOG: true if the guest died of QEMU's stale int3
# (docs/testing.md, Known limits): an "Oops: int3" whose Code: line shows
# that the byte before RIP is no longer an int3, since the other vCPU had
# already patched it away. An int3 that is still there (a leaked
# breakpoint, ours or not) does not match.
qemu_int3()
{
	local code

	code=$(grep -A 12 -m 1 'Oops: int3' "$1" | grep -m 1 'Code:')
	[[ $code =~ \ ([0-9a-f]{2})\ \< ]] && [ "${BASH_REMATCH[1]}" != cc ]
}

# run_part K KO LOG SCRIPT... : the guest for one part of the suite. A
# guest killed by QEMU's stale int3 (qemu_int3) is booted once more for
# the scripts that had not reported a result, the one it died in
# included; the log says so, and its count in the step's output.
run_part()
{
	local k=$1 ko=$2 log=$3 cpus=$4 rc s left=()

	shift 4
	# part_boot SCRIPT... : one guest of K running them, its output on stdout
	part_boot() {
		VM_CPUS=$cpus VM_SLOTS=$VM_JOBS scripts/vng-run.sh "$k" \
			"selftests/run_vm.sh $(printf '%q' "$ko") $*" 2>&1
	}
	part_boot "$@" >"$log"
	rc=$?
	[ $rc -eq 125 ] && qemu_int3 "$log" || return $rc
	for s in "$@"; do
		grep -qE "^(not )?ok [0-9]+ selftests: tcptw: $s( |\$)" "$log" ||
			left+=("$s")
	done
	[ ${#left[@]} -gt 0 ] || return $rc
	echo "check.sh: QEMU's stale int3 killed the guest (docs/testing.md, Known limits); booting again for: ${left[*]}" >>"$log"
	part_boot "${left[@]}" >>"$log"
}

# count_tap LOG: add the TAP/KTAP result lines of LOG to the current step;
# sets `found` to how many there were. Only unindented lines count, so that
# KTAP subtests are not counted twice with their parent.
count_tap() {
	local line took=
	found=0
	while IFS= read -r line; do
		case $line in
		"ok "* | "not ok "*) ;;
		"# tcptw_"*.sh": "*" s")
			# run_tests.sh's duration of the script just ended
			took=" (${line##*: })"
			continue ;;
		*) continue ;;
		esac
		found=$((found + 1))
		echo "[$step] $line$took"
		took=
		shopt -s nocasematch
		if [[ $line == *"# skip"* || $line == *"# todo"* ]]; then
			ss=$((ss + 1))
		elif [[ $line == "ok "* ]]; then
			sp=$((sp + 1))
		else
			sf=$((sf + 1))
		fi
		shopt -u nocasematch
	done <"$1"
}

# show_failures LOG: the failure lines of a run_tests.sh log (failed
# checks, failed cases, the reasons the scripts give), so that a CI log
# says why without the guest's log file.
show_failures() {
	# every failed subtest with what it printed since its "--- NAME"
	# header (its ground truth, the reason), then the guest's own alarms;
	# bounded per subtest and in all
	awk '
	/^# # --- / || /^# ok [0-9]/ { n = 0; nf = 0 }
	/^# (# )+/ {
		ring[n % 40] = $0
		if ($0 ~ /^# (# )+ *FAIL: / && nf < 20) { fl[nf] = n; f[nf++] = $0 }
		n++
	}
	/^# not ok [0-9]/ {
		# the failed checks that scrolled out of the last 40 lines
		# (a trace dumped on failure can be long), then those lines
		from = n > 40 ? n - 40 : 0
		for (i = 0; i < nf; i++) if (fl[i] < from) print f[i]
		for (i = from; i < n; i++) print ring[i % 40]
		print
		n = 0; nf = 0
		next
	}
	/^# # (.* still running after|(rmmod|insmod) #|#   \[<)/ { print }
	' "$1" | cut -c1-400 | head -n 200 | sed "s/^/[$step] | /"
}

# run_tap STEP-NAME LOG CMD...: run a TAP-emitting command, count its lines
run_tap() {
	local name=$1 log=$2 rc
	shift 2
	"$@" >"$log" 2>&1
	rc=$?
	count_tap "$log"
	if [ "$found" -eq 0 ]; then
		fail "$name printed no test results (exit $rc, log $log)"
	elif [ $rc -ne 0 ] && [ "$sf" -eq 0 ]; then
		fail "$name exited $rc without a failed test (log $log)"
	fi
}

kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(6.1)
# one kernel per hook backend: ftrace (5.10, 6.1) and fprobes (6.12, 7.2)
CI_SUITE_KERNELS=${CI_SUITE_KERNELS:-6.1 7.2}
if [[ " ${kernels[*]} " == *" all "* ]]; then
	mapfile -t kernels < <(scripts/kernels.sh list)
elif [[ " ${kernels[*]} " == *" ci "* ]]; then
	# the guests' kernels first, so that they start first
	kernels=()
	for k in $(scripts/kernels.sh list); do
		[[ " $CI_SUITE_KERNELS " != *" $k "* ]] || kernels+=("$k")
	done
	for k in $(scripts/kernels.sh list); do
		[[ " $CI_SUITE_KERNELS " == *" $k "* ]] || kernels+=("$k:build")
	done
fi
# build_only[K]: build tcptw.ko for K, boot nothing; n_build of them
declare -A build_only=()
n_build=0
for i in "${!kernels[@]}"; do
	if [[ ${kernels[i]} == *:build ]]; then
		kernels[i]=${kernels[i]%:build}
		build_only[${kernels[i]}]=1
		n_build=$((n_build + 1))
	fi
done

# 1. dependencies
begin deps
if scripts/deps.sh >"$LOGS/deps.log" 2>&1; then
	pass "scripts/deps.sh"
else
	fail "scripts/deps.sh (log $LOGS/deps.log)"
	show_tail 20 "$LOGS/deps.log"
fi
end

# 2. selftests per kernel: build, fetch, build the module, start the guests
selftests_built=0
if [ ${#kernels[@]} -gt 0 ]; then
	begin "selftests build"
	# the CLI first: tcptw_cli.sh runs it (the unit tests come later)
	if [ -f userspace/Makefile ]; then
		if make -C userspace tcptw >"$LOGS/userspace-build.log" 2>&1; then
			pass "make -C userspace tcptw"
		else
			fail "make -C userspace tcptw (log $LOGS/userspace-build.log)"
			show_tail 20 "$LOGS/userspace-build.log"
		fi
	fi
	# tcptw_cli_output.sh lints the guest's real export with promtool
	if scripts/get-promtool.sh >/dev/null 2>"$LOGS/promtool.log"; then
		pass "scripts/get-promtool.sh"
	else
		fail "scripts/get-promtool.sh (log $LOGS/promtool.log)"
	fi
	if [ ! -f selftests/Makefile ]; then
		skip "make -C selftests" "selftests/Makefile does not exist yet"
	elif make -C selftests >"$LOGS/selftests-build.log" 2>&1; then
		pass "make -C selftests"
		selftests_built=1
	else
		fail "make -C selftests (log $LOGS/selftests-build.log)"
		show_tail 20 "$LOGS/selftests-build.log"
	fi
	end
fi

# The CLI with 100,000 sockets on this host (census time, watch period):
# timed, so before any build or guest starts (on a host whose two cores
# run two TCG guests, a census takes seconds of wall time).
if [ -f userspace/tcptw ]; then
	begin "cli at scale"
	run_tap "scripts/cli-scale.sh" "$LOGS/cli-scale.log" scripts/cli-scale.sh
	end
fi

# Per kernel: fetch and build in order, then start its guests in the
# background at once; up to VM_JOBS guests run side by side (vng-run.sh's
# VM_SLOTS). Each kernel's scripts are dealt out to VM_PARTS one-vCPU
# guests (default 2), by their durations (selftests/durations: longest
# first, each to the part with the least so far), so that the parts end
# together and none comes near VM_TIMEOUT on a slow machine; the scripts
# marked cpus:2 there (races and per-CPU merging need a second CPU) go to
# one more guest, part VM_PARTS, with two, which takes two VM slots
# (vng-run.sh) and so runs alone; it starts first, so that the one-vCPU
# parts after it take a slot each as one ends. One vCPU per guest: two
# two-vCPU guests on this 2-core machine kind take twice the time of two
# one-vCPU guests for the same script (multi-threaded TCG's vCPUs wait
# for each other when the host deschedules one; docs/testing.md). Two
# guests side by side: a third (tried with VM_JOBS=3) made the scripts
# 1.4 to 3.3 times slower each, more than the idle it filled.
# Results are tallied per kernel in the order given, after every guest
# has exited.
VM_JOBS=${VM_JOBS:-2}
VM_PARTS=${VM_PARTS:-2}
export VM_TIMEOUT=${VM_TIMEOUT:-2700}
mapfile -t suite < <(cd selftests 2>/dev/null && ls tcptw_*.sh 2>/dev/null | sort)
# ONCE_KERNEL: in "ci", the only kernel that runs the scripts marked once
# in selftests/durations (the CLI, the tools, the exporters: nothing in
# them depends on the hook backend or the kernel's version)
ONCE_KERNEL=
if [[ " $* " == *" ci "* ]]; then
	ONCE_KERNEL=${CI_SUITE_KERNELS%% *}
fi
# dur_field SCRIPT K: "SECONDS CPUS ONCE" for SCRIPT from
# selftests/durations: its seconds (K:SECONDS there if it has one for K,
# a seed that skips on K; 120 s for a script not listed), 2 if it is
# marked cpus:2 (else 1), 1 if it is marked once (else 0)
dur_field()
{
	awk -v s="$1" -v k="$2" '$1 == s {
		t = $2; c = 1; o = 0
		for (i = 3; i <= NF; i++) {
			if (index($i, k ":") == 1) t = substr($i, length(k) + 2)
			if ($i == "cpus:2") c = 2
			if ($i == "once") o = 1
		}
		print t, c, o; found = 1
	}
	END { if (!found) print 120, 1, 0 }' selftests/durations 2>/dev/null
}
# deal_parts K : part_of[SCRIPT] = its part in K's guests (none for
# DEB_GUEST_SCRIPT where deb_guest K, none for a script marked once on a
# kernel other than ONCE_KERNEL: not_here lists those), longest script
# first to the one-vCPU part with the least time so far; VM_PARTS for a
# script marked cpus:2
declare -A part_of=()
not_here=()
deal_parts()
{
	local k=$1 s t c o p best
	local -a load=()

	part_of=()
	not_here=()
	for ((p = 0; p < VM_PARTS; p++)); do load[p]=0; done
	while read -r t c o s; do
		if [ "$o" = 1 ] && [ -n "$ONCE_KERNEL" ] && [ "$k" != "$ONCE_KERNEL" ]; then
			not_here+=("$s")
			continue
		fi
		if [ "$c" = 2 ]; then
			part_of[$s]=$VM_PARTS
			continue
		fi
		best=0
		for ((p = 1; p < VM_PARTS; p++)); do
			[ "${load[p]}" -lt "${load[best]}" ] && best=$p
		done
		part_of[$s]=$best
		load[best]=$((load[best] + t))
	done < <(for s in "${suite[@]}"; do
		# the packages' test runs it on K with the dkms-built module,
		# in a guest of its own (step 6)
		[ "$s" = "$DEB_GUEST_SCRIPT" ] && deb_guest "$k" && continue
		echo "$(dur_field "$s" "$k") $s"
	done | sort -rn -k1,1 -k4,4)
}
# deb_kernel K: the packages' test (step 6) covers K (a chroot of its
# suite); deb_guest K: it also boots K with the dkms-built tcptw.ko (K is
# not only built) and runs DEB_GUEST_SCRIPT there, so K's own guests
# leave that script out: it runs once per kernel, not twice
DEB_GUEST_SCRIPT=tcptw_nat_paws.sh
deb_kernel() { [ "$1" = 6.1 ] || [ "$1" = 5.10 ]; }
deb_guest() { deb_kernel "$1" && [ -z "${build_only[$1]:-}" ]; }
# failed[K]: the step that failed before K's guest could start, if any;
# vm_pid[K.P], vm_t0[K.P]: guest P of kernel K
declare -A vm_pid vm_t0 failed
prev_taken= prev_pid=
for k in "${kernels[@]}"; do
	failed[$k]=""
	echo "== kernel $k: fetch and build"
	if ! scripts/kernels.sh builder "$k" >/dev/null 2>"$LOGS/fetch-$k.log"; then
		failed[$k]=unknown
		continue
	fi
	if ! scripts/kernels.sh fetch "$k" >>"$LOGS/fetch-$k.log" 2>&1; then
		failed[$k]=fetch
		continue
	fi
	if ! ko=$(scripts/build-kmod.sh "$k" '' 2>"$LOGS/build-kmod-$k.log" | tail -n 1) ||
		[ ! -f "$ko" ]; then
		failed[$k]=build
		continue
	fi
	[ -z "${build_only[$k]:-}" ] || continue
	# the test build (kmod/test.h knobs) beside it, for the race tests;
	# run_vm.sh finds it next to $ko's directory, as "<dir>-test"
	if ! scripts/build-kmod.sh "$k" "$CACHE/build/$k-test" TCPTW_TEST=1 \
		>/dev/null 2>>"$LOGS/build-kmod-$k.log"; then
		failed[$k]=build
		continue
	fi
	[ -x selftests/run_vm.sh ] || continue
	deal_parts "$k"
	[ ${#not_here[@]} -eq 0 ] ||
		echo "== kernel $k: not booted for (marked once, they run on $ONCE_KERNEL): ${not_here[*]}"
	for ((p = VM_PARTS; p >= 0; p--)); do
		part=()
		for s in "${suite[@]}"; do
			[ "${part_of[$s]:-}" != "$p" ] || part+=("$s")
		done
		[ ${#part[@]} -gt 0 ] || continue
		cpus=$([ "$p" -eq "$VM_PARTS" ] && echo 2 || echo 1)
		echo "== kernel $k: VM $p ($cpus vCPU) started: ${part[*]} (log $LOGS/vm-$k.$p.log)"
		vm_t0[$k.$p]=$SECONDS
		# a kernel slower than the stock ones (the debug kernels,
		# kernels.sh slow) gets its guest's timeout scaled alike
		slow=$(scripts/kernels.sh slow "$k")
		# the guests take the VM slots in the order started here (6.1's
		# parts, the two-vCPU one first, before 7.2's): each waits for a slot only
		# once the one before it has one, or has ended without
		taken=$LOGS/vm-$k.$p.slot
		rm -f "$taken"
		(
			while [ -n "$prev_taken" ] && [ ! -e "$prev_taken" ] &&
				kill -0 "$prev_pid" 2>/dev/null; do
				sleep 1
			done
			VM_SLOT_TAKEN=$taken \
			VM_TIMEOUT=$((VM_TIMEOUT * (slow > 3 ? slow / 2 : 1))) \
				run_part "$k" "$ko" "$LOGS/vm-$k.$p.log" "$cpus" "${part[@]}"
		) &
		vm_pid[$k.$p]=$!
		prev_taken=$taken prev_pid=$!
	done
done

# The packages' install test for the kernels it covers: chroot work
# beside the guests, then a guest per kernel when a VM slot is free.
deb_kernels=()
for k in "${kernels[@]}"; do
	# a kernel only built gets the chroot part (dkms builds and installs
	# the module there), not the guest
	deb_kernel "$k" && [ -z "${failed[$k]}" ] &&
		deb_kernels+=("$k${build_only[$k]:+:novm}")
done
deb_pid=
if [ ${#deb_kernels[@]} -gt 0 ]; then
	echo "== packages: deb-test.sh ${deb_kernels[*]} started (log $LOGS/deb-test.log)"
	deb_t0=$SECONDS
	VM_CPUS=2 VM_SLOTS=$VM_JOBS scripts/deb-test.sh "${deb_kernels[@]}" >"$LOGS/deb-test.log" 2>&1 &
	deb_pid=$!
fi

# 3. userspace unit tests (while the guests boot and run: the first
# guest starts a couple of minutes earlier)
begin userspace
if [ -f userspace/Makefile ]; then
	run_tap "make -C userspace check" "$LOGS/userspace.log" make -C userspace check
else
	skip "unit tests" "userspace/Makefile does not exist yet"
fi
end

# 4. style, and the example alert rules under promtool
begin style
run_tap "scripts/style.sh" "$LOGS/style.log" scripts/style.sh
end
begin alerts
run_tap "scripts/test-alerts.sh" "$LOGS/alerts.log" scripts/test-alerts.sh
end
# the wire oracle the selftests compare with, on traces made by hand
begin wire
run_tap "scripts/test-wire.py" "$LOGS/wire.log" /usr/bin/python3 scripts/test-wire.py
end

# 5. each kernel's results, in the order given
for k in "${kernels[@]}"; do
	begin "kernel $k"
	case ${failed[$k]} in
	unknown)
		fail "unknown kernel $k"
		end
		continue
		;;
	fetch)
		fail "fetch $k (log $LOGS/fetch-$k.log)"
		show_tail 10 "$LOGS/fetch-$k.log"
		end
		continue
		;;
	build)
		fail "build tcptw.ko for $k (log $LOGS/build-kmod-$k.log)"
		show_tail 30 "$LOGS/build-kmod-$k.log"
		end
		continue
		;;
	esac
	pass "build tcptw.ko for $k (W=1, no warnings)"
	if [ -n "${build_only[$k]:-}" ]; then
		skip "selftests on $k" "$k:build: built, not booted (the suite runs on ${CI_SUITE_KERNELS// /, })"
		end
		continue
	fi
	if [ -z "${vm_pid[$k.0]:-}" ]; then
		skip "selftests on $k" "selftests/run_vm.sh does not exist yet"
		end
		continue
	fi
	[ $selftests_built -eq 1 ] || echo "[$step] (selftests build failed; ran the VM anyway)"
	for ((p = 0; p <= VM_PARTS; p++)); do
		[ -n "${vm_pid[$k.$p]:-}" ] || continue
		log=$LOGS/vm-$k.$p.log
		wait "${vm_pid[$k.$p]}"
		rc=$?
		echo "[$step] VM $p for $k: exit $rc after $((SECONDS - vm_t0[$k.$p])) s since its start (log $log)"
		grep -h "^check.sh: QEMU's stale int3" "$log" | sed "s/^/[$step] /"
		sf0=$sf
		count_tap "$log"
		[ "$sf" -gt "$sf0" ] && show_failures "$log"
		if [ $rc -eq 125 ]; then
			fail "VM $p for $k failed or timed out (log $log)"
			show_oops "$log"
			show_tail 20 "$log"
		elif [ "$found" -eq 0 ]; then
			fail "selftests/run_vm.sh on $k printed no test results (exit $rc, log $log)"
			show_tail 20 "$log"
		elif [ $rc -ne 0 ] && [ "$sf" -eq "$sf0" ]; then
			fail "selftests/run_vm.sh on $k exited $rc without a failed test (log $log)"
		fi
	done
	end
done

# 6. the packages' install test
begin packages
if [ -n "$deb_pid" ]; then
	wait "$deb_pid"
	rc=$?
	echo "[$step] deb-test.sh ${deb_kernels[*]}: exit $rc after $((SECONDS - deb_t0)) s (log $LOGS/deb-test.log)"
	count_tap "$LOGS/deb-test.log"
	if [ "$found" -eq 0 ]; then
		fail "scripts/deb-test.sh printed no test results (exit $rc, log $LOGS/deb-test.log)"
		show_tail 20 "$LOGS/deb-test.log"
	elif [ $rc -ne 0 ] && [ "$sf" -eq 0 ]; then
		fail "scripts/deb-test.sh exited $rc without a failed test (log $LOGS/deb-test.log)"
	elif [ "$sf" -gt 0 ]; then
		grep '^#   ' "$LOGS/deb-test.log" | head -n 60 | sed "s/^/[$step] | /"
	fi
else
	skip "package install test" "it covers 6.1 and 5.10, none of them among the kernels built here (${kernels[*]})"
fi
end

echo
printf '%-22s %7s %7s %8s\n' step passed failed skipped
printf '%s\n' "${rows[@]}"
echo "logs: $LOGS"
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
