#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cli-scale.sh: the CLI on a host with 100,000 sockets, as TAP. Runs on
# this host (no guest, no module: the census is sock_diag's), in a network
# namespace of its own with 50,000 connections over its loopback (100,000
# established sockets, both ends, held by one process):
#   1. `tcptw sockets -j` counts all of them, in under a second;
#   2. `tcptw watch -i 1 -c 6 -j` keeps a 1 s period (the census is taken
#      on a fixed schedule, not followed by a full sleep), every sample
#      counting all of them.
# The guest test tcptw_cli_output.sh does the same at 20,000 sockets
# against the real module; under TCG a census of 100,000 takes longer than
# the period itself. Part of `make check`; needs root (netns), skips
# without it. Exit status: 0 iff every test passed.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CLI=$REPO/userspace/tcptw
PAIRS=${PAIRS:-50000}
want=$((2 * PAIRS))

echo "1..2"
skip_all()
{
	echo "ok 1 - census of $want sockets # SKIP $1"
	echo "ok 2 - watch -i 1 period with $want sockets # SKIP $1"
	exit 0
}
[ "$(id -u)" -eq 0 ] || skip_all "needs root (a network namespace)"
[ -x "$CLI" ] || skip_all "the CLI is not built (make -C userspace tcptw)"
ns=tcptw-scale-$$
ip netns add "$ns" || skip_all "ip netns add failed"
tmp=$(mktemp -d)
holders=()
# shellcheck disable=SC2317 # run by the trap
cleanup()
{
	[ ${#holders[@]} -eq 0 ] || kill "${holders[@]}" 2>/dev/null
	wait 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
ip -n "$ns" link set lo up
# the listeners (9000 and up) below the ephemeral range: a connect() of
# one holder must not take the port another is about to listen on
ip netns exec "$ns" sysctl -qw net.ipv4.ip_local_port_range="10000 65535"

# the holders: PAIRS connections, every end kept open, 8000 per process
# (16,000 descriptors: under a hard limit of 20,000 and no
# CAP_SYS_RESOURCE, as on CI's machines), each process with a listener of
# its own; bounded: each exits after 300 s or when killed
holders=()
for ((i = 0, left = PAIRS; left > 0; i++, left -= 8000)); do
	ip netns exec "$ns" timeout 300 python3 -c '
import resource, socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
ls = socket.socket()
ls.bind(("127.0.0.1", port))
ls.listen(4096)
keep = []
for _ in range(n):
    c = socket.create_connection(("127.0.0.1", port))
    s, _ = ls.accept()
    keep += [c, s]
print("ready", flush=True)
time.sleep(300)
' $((9000 + i)) $((left < 8000 ? left : 8000)) >"$tmp/holder.$i" 2>&1 &
	holders+=($!)
done
ready()
{
	[ "$(cat "$tmp"/holder.* | grep -c '^ready$')" -eq ${#holders[@]} ]
}
for _ in $(seq 1200); do
	ready && break
	sleep 0.1
done
if ! ready; then
	cat "$tmp"/holder.* | sed 's/^/# /'
	echo "not ok 1 - census of $want sockets # the holders did not make them in 120 s"
	echo "not ok 2 - watch -i 1 period with $want sockets # no sockets"
	exit 1
fi

rc=0
t0=$(date +%s%N)
ip netns exec "$ns" "$CLI" sockets -j >"$tmp/sockets" 2>"$tmp/err"
crc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
got=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["sockets"]["established"])' \
	"$tmp/sockets" 2>/dev/null)
echo "# one census: ${ms} ms (exec included), established ${got:-?}"
if [ $crc -eq 0 ] && [ "${got:-0}" -eq "$want" ] && [ "$ms" -lt 1000 ]; then
	echo "ok 1 - census of $want sockets in ${ms} ms"
else
	sed 's/^/# /' "$tmp/err"
	echo "not ok 1 - census of $want sockets: exit $crc, established ${got:-?}, ${ms} ms (want $want in < 1000 ms)"
	rc=1
fi

ip netns exec "$ns" "$CLI" watch -i 1 -c 6 -j >"$tmp/watch" 2>"$tmp/err"
crc=$?
res=$(python3 -c '
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ts = [x["ts"] for x in s]
iv = [x["interval"] for x in s]
est = [x["sockets"]["established"] for x in s]
print(len(s), min(est), max(est), int(1000 * (ts[-1] - ts[0]) / (len(ts) - 1)),
      int(1000 * min(iv)), int(1000 * max(iv)))' "$tmp/watch" 2>/dev/null)
echo "# watch: samples, fewest and most established, mean period ms, shortest and longest interval ms: ${res:-?}"
# shellcheck disable=SC2086
set -- ${res:-0 0 0 0 0 0}
if [ $crc -eq 0 ] && [ "$1" -eq 6 ] && [ "$2" -eq "$want" ] && [ "$3" -eq "$want" ] &&
	[ "$4" -ge 950 ] && [ "$4" -le 1050 ] && [ "$5" -ge 900 ] && [ "$6" -le 1100 ]; then
	echo "ok 2 - watch -i 1 keeps its period (mean $4 ms) with $want sockets"
else
	sed 's/^/# /' "$tmp/err"
	echo "not ok 2 - watch -i 1 with $want sockets: exit $crc, got '$res' (want 6 samples of $want, mean 950-1050 ms, each 900-1100)"
	rc=1
fi
exit $rc
