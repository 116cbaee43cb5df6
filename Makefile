# SPDX-License-Identifier: GPL-2.0
# tcptw: entry points only; the work is in Kbuild, userspace/, selftests/
# and scripts/.

# Kernel the VM targets use (a name from `scripts/kernels.sh list`).
KERNEL ?= 6.1
# Kernels `make check` runs the suite on ("all" = every supported one).
KERNELS ?= $(KERNEL)

# Headers to build the module against: the running kernel's if installed
# (a real test VM), else the fetched headers of $(KERNEL).
RUNNING_KDIR := /lib/modules/$(shell uname -r)/build
ifeq ($(origin KDIR),undefined)
ifneq ($(wildcard $(RUNNING_KDIR)/Makefile),)
KDIR := $(RUNNING_KDIR)
endif
endif

.PHONY: all kmod userspace selftests check demo examples bench soak coverage fault kcsan seeds packetdrill style sparse \
	install clean deps deb

all: kmod userspace selftests

kmod:
ifdef KDIR
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules
else
	scripts/build-kmod.sh $(KERNEL) $(CURDIR)
endif
	@# Kbuild is at the top, so is tcptw.ko; kmod/tcptw.ko works too
	ln -sf ../tcptw.ko kmod/tcptw.ko

userspace:
	$(MAKE) -C userspace

selftests:
	$(MAKE) -C selftests

deps:
	scripts/deps.sh

# Unit tests, style checks, then the selftest suite in a QEMU guest of
# every kernel in $(KERNELS). Ends with "N passed, N failed, N skipped".
check:
	scripts/check.sh $(KERNELS)

# The NAT + PAWS reproduction in a guest of $(KERNEL), with the counters
# and events it produced.
demo:
	scripts/demo.sh $(KERNEL)

# Real output of every CLI command, captured in a guest of $(KERNEL) into
# docs/examples/ and from there into docs/tcptw.8 and README.md.
examples:
	scripts/demo.sh --examples $(KERNEL)

bench:
	scripts/bench.sh $(KERNEL)

# The full soak in a guest of $(KERNEL) (hours; a bounded one runs in
# make check as selftests/tcptw_soak.sh).
soak:
	scripts/soak.sh $(KERNEL)

# The coverage set in one guest of $(KERNEL) (docs/testing.md: Lanes):
# every hook fired, no kernel report, nothing in kmemleak; the debug
# lane with KERNEL=6.1-debug or 7.2-debug.
coverage:
	scripts/coverage-lane.sh $(KERNEL)

# The fault lane in one guest of a debug kernel (docs/testing.md: Lanes):
# every allocation of tcptw's load, namespace init, /proc reads, control
# writes and conntrack attach failed in turn (fail-nth). KERNEL=7.2-debug
# for the other one.
fault:
	scripts/fault-lane.sh $(if $(filter %-debug,$(KERNEL)),$(KERNEL),6.1-debug)

# The KCSAN lane in one two-vCPU guest of 7.2-kcsan (docs/testing.md:
# Lanes): the coverage set, the opened races and the floods under the
# data race detector.
kcsan:
	scripts/kcsan-lane.sh 7.2-kcsan

# The field reports with their own tools (ab, wrk, nginx, php-fpm),
# selftests/tcptw_seed_*.sh, in one guest of $(KERNEL), whichever kernel it
# is. make check runs the same scripts, on the kernels they name and scaled
# to CI's time (docs/testing.md: The field reports, reproduced).
seeds:
	scripts/seeds.sh $(KERNEL)

# The kernel's own TCP tests (packetdrill's suite and the kernel's
# scripts) without and with tcptw in one guest of $(KERNEL): the same
# results, no kernel report, counters == MIBs, selftests/packetdrill.expect
# (docs/testing.md: The packetdrill lane). Not part of make check.
packetdrill:
	scripts/packetdrill.sh $(KERNEL)

style:
	KERNEL=$(KERNEL) scripts/style.sh

sparse:
	scripts/build-kmod.sh $(KERNEL) "" C=2

install: all
	$(MAKE) -C userspace install
ifdef KDIR
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install
endif

# The tcptw-dkms and tcptw Debian packages (dpkg-buildpackage in a copy of
# the tree), checked with lintian; into .cache/deb/.
deb:
	scripts/deb-build.sh

# Not kbuild's clean: with M=$(CURDIR) it deletes every *.ko below the repo,
# the fetched kernels' modules in .cache/ included.
clean:
	rm -f kmod/*.o kmod/.*.cmd kmod/compat/.*.cmd kmod/tcptw.ko *.ko *.mod *.mod.c *.o \
		.*.cmd modules.order Module.symvers
	$(MAKE) -C userspace clean
	$(MAKE) -C selftests clean
