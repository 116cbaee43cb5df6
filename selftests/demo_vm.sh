#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copyright (c) 2025 The tcptw authors.
#
# demo_vm.sh KO_PATH : for `make demo`, inside the guest: insmod, the NAT +
# PAWS main scenario of tcptw_nat_paws.sh only, printing (before its
# namespaces are deleted) the server netns's /proc/net/tcptw/counters, the
# last 10 events and the kernel's ground truth; then rmmod.

ko=${1:?usage: demo_vm.sh KO_PATH}
here=$(cd "$(dirname "$0")" && pwd)
rc=0

timeout 60 make -s -C "$here" tcptw_traffic || exit 1
timeout 60 insmod "$ko" || { echo "demo: insmod $ko failed"; exit 1; }
echo "=== /proc/net/tcptw/probes"
timeout 10 cat /proc/net/tcptw/probes
TCPTW_DEMO=1 timeout 300 "$here/tcptw_nat_paws.sh" || rc=$?
timeout 60 rmmod tcptw || rc=1
exit $rc
