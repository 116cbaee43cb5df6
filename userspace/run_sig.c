// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/*
 * tcptw run's signals. CMD runs in tcptw's process group, as the job of a
 * shell it would be on its own: the terminal's Ctrl-C and Ctrl-Z, and a
 * kill of the group, reach both.
 *
 * Which signals tcptw passes on to CMD. A signal the kernel sent (si_code
 * SI_KERNEL: the terminal's Ctrl-C, its hangup) went to the whole
 * foreground group: CMD has it already, it is not passed on. A kill() is
 * SI_USER whether it was sent to tcptw alone (kill PID: CMD gets it only
 * if tcptw passes it on) or to a group CMD is in too (kill -- -PGID, the
 * second kill of timeout(1), a cancelled CI job: CMD has it already), and
 * nothing in siginfo tells the two apart. A witness does: a child of
 * tcptw in the same group that blocks every signal and never takes one.
 * kill(-PGID) queues the signal on each member before it returns, the
 * newest member first (__kill_pgrp_info() walks the group's list, which
 * attach_pid() adds to at the head), and the witness joined after tcptw:
 * when tcptw's copy has arrived the witness's is pending. So, for a kill:
 *  - CMD is no longer in tcptw's group (it made its own): passed on;
 *  - the witness has it pending: the group got it, CMD too: not passed
 *    on, and a new witness replaces this one, for the next signal;
 *  - else it was sent to tcptw alone: passed on, once.
 * Without a witness (fork failed) every kill is passed on, as before.
 *
 * Dispositions: a signal tcptw inherited ignored (nohup, a background job
 * of a non-interactive shell: SIGINT) stays ignored, for tcptw and CMD.
 */

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"
#include "run_sig.h"

/* the same number on every architecture since 5.9; glibc < 2.32 (bullseye)
 * has no name for it, and ENOSYS on older kernels takes the loop below
 */
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* The signals that stop the run; each is passed on, or not, as above. */
static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP };
#define N_STOP ARRAY_SIZE(stop_sigs)

enum { GOT_USER = 1, GOT_KERNEL = 2 };
static atomic_int got[N_STOP];
static bool handled[N_STOP];

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	size_t i;

	(void)uc;
	for (i = 0; i < N_STOP; i++)
		if (stop_sigs[i] == sig)
			atomic_fetch_or(&got[i], si->si_code > 0 ? GOT_KERNEL :
					GOT_USER);
}

/* A child of tcptw in its group, every signal blocked; 0 if none. */
static pid_t witness_start(void)
{
	pid_t parent = getpid(), pid;
	sigset_t all;
	int fd;

	pid = fork();
	if (pid)
		return pid < 0 ? 0 : pid;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	/* it holds no pipe of CMD's open, and dies with tcptw */
	if (syscall(SYS_close_range, 0, ~0U, 0))
		for (fd = 0; fd < 1024; fd++)
			close(fd);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	prctl(PR_SET_NAME, "tcptw-witness");
	for (;;)
		pause();
}

int run_sig_init(struct run_sig *rs)
{
	struct sigaction sa = { .sa_sigaction = on_signal,
				.sa_flags = SA_SIGINFO }, old;
	sigset_t block;
	size_t i;

	memset(rs, 0, sizeof(*rs));
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	for (i = 0; i < N_STOP; i++)
		sigaddset(&block, stop_sigs[i]);
	if (sigprocmask(SIG_BLOCK, &block, &rs->orig))
		return -errno;
	rs->waitmask = rs->orig;
	sigemptyset(&sa.sa_mask);
	/* SIGCHLD ends ppoll() when CMD ends, even if it came ignored */
	if (sigaction(SIGCHLD, &sa, &rs->chld))
		return -errno;
	sigdelset(&rs->waitmask, SIGCHLD);
	for (i = 0; i < N_STOP; i++) {
		atomic_store(&got[i], 0);
		handled[i] = false;
		if (sigaction(stop_sigs[i], NULL, &old))
			return -errno;
		if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
			continue;
		if (sigaction(stop_sigs[i], &sa, NULL))
			return -errno;
		handled[i] = true;
		sigdelset(&rs->waitmask, stop_sigs[i]);
	}
	/* before CMD: a kill that reaches CMD finds the witness there too */
	rs->witness = witness_start();
	return 0;
}

void run_sig_child(const struct run_sig *rs)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	size_t i;

	/* a signal still blocked here is CMD's to take, by default */
	sigemptyset(&dfl.sa_mask);
	for (i = 0; i < N_STOP; i++)
		if (handled[i])
			sigaction(stop_sigs[i], &dfl, NULL);
	sigaction(SIGCHLD, &rs->chld, NULL);
	sigprocmask(SIG_SETMASK, &rs->orig, NULL);
}

static void witness_stop(struct run_sig *rs)
{
	if (!rs->witness)
		return;
	kill(rs->witness, SIGKILL);
	while (waitpid(rs->witness, NULL, 0) < 0 && errno == EINTR)
		;
	rs->witness = 0;
}

/* The signals pending for @pid, per thread and shared; 0 if unknown. */
static unsigned long long pending_of(pid_t pid)
{
	unsigned long long v, all = 0;
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if ((!strncmp(line, "SigPnd:", 7) ||
		     !strncmp(line, "ShdPnd:", 7)) &&
		    sscanf(line + 7, "%llx", &v) == 1)
			all |= v;
	fclose(f);
	return all;
}

static bool witness_has(const struct run_sig *rs, int sig)
{
	return pending_of(rs->witness) & (1ULL << (sig - 1));
}

void run_sig_started(struct run_sig *rs, pid_t cmd)
{
	rs->cmd = cmd;
}

/* Was @sig, sent by kill(), sent to tcptw alone? (the rule above) */
static bool to_tcptw_alone(const struct run_sig *rs, int sig)
{
	struct timespec ms = { 0, 2000000 };

	if (!rs->witness || getpgid(rs->cmd) != getpgrp())
		return true;
	if (witness_has(rs, sig))
		return false;
	/* the walk's order is the kernel's: a second look, 2 ms later */
	nanosleep(&ms, NULL);
	return !witness_has(rs, sig);
}

void run_sig_dispatch(struct run_sig *rs)
{
	bool seen = false;
	size_t i;
	int v;

	for (i = 0; i < N_STOP; i++) {
		v = atomic_exchange(&got[i], 0);
		if (!v)
			continue;
		seen = true;
		rs->interrupted = true;
		if ((v & GOT_USER) && to_tcptw_alone(rs, stop_sigs[i]))
			kill(rs->cmd, stop_sigs[i]);
	}
	/* the terminal's or a group's signal is pending there: a clean one */
	if (seen && rs->witness) {
		unsigned long long p = pending_of(rs->witness);

		for (i = 0; i < N_STOP; i++)
			if (p & (1ULL << (stop_sigs[i] - 1)))
				break;
		if (i < N_STOP) {
			witness_stop(rs);
			rs->witness = witness_start();
		}
	}
}

void run_sig_fini(struct run_sig *rs)
{
	witness_stop(rs);
}

void run_sig_die_as(int status)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	struct rlimit none = { 0, 0 };
	sigset_t one;
	int sig;

	if (!WIFSIGNALED(status))
		return;
	sig = WTERMSIG(status);
	/* the core dump, if any, was CMD's: none of tcptw's beside it */
	setrlimit(RLIMIT_CORE, &none);
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	fflush(stdout);
	fflush(stderr);
	sigemptyset(&one);
	sigaddset(&one, sig);
	kill(getpid(), sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	/* still here: a signal whose default is not to die; 128 + it, then */
}
