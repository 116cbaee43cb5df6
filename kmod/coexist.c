// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The tcptw authors.
 *
 * Test build: other tools on the functions tcptw hooks, while it is
 * loaded (tcptw_coexist.sh). Writing /sys/module/tcptw/parameters/
 * test_coexist attaches, on every function tcptw hooks in vmlinux:
 *
 *   ipmodify  an ftrace_ops with FTRACE_OPS_FL_IPMODIFY of its own per
 *             function, as livepatch registers (its callback only counts:
 *             IPMODIFY is what ftrace grants to one user per function);
 *   kprobe    a kprobe with a post handler, which ftrace-based kprobes
 *             also register as an IPMODIFY user;
 *   off       neither.
 *
 * Reading it gives one line per function: name, mode, the error its
 * registration got (0: attached) and the calls it saw.
 */
#include <linux/atomic.h>
#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/string.h>

#include "probes.h"
#include "test.h"

#define MAX_FNS 32

enum { COEXIST_OFF, COEXIST_IPMODIFY, COEXIST_KPROBE };

static const char * const mode_names[] = { "off", "ipmodify", "kprobe" };

struct coexist_fn {
	struct ftrace_ops ops;
	struct kprobe kp;
	const char *name;
	atomic_long_t calls;
	int err;
	bool on;
};

static DEFINE_MUTEX(coexist_lock);
static struct coexist_fn cfns[MAX_FNS];
static unsigned int ncfns;
static int mode;

static void notrace ipmodify_cb(unsigned long ip, unsigned long parent_ip,
				struct ftrace_ops *op,
				struct tcptw_ftrace_regs *regs)
{
	atomic_long_inc(&container_of(op, struct coexist_fn, ops)->calls);
}

static int kp_pre(struct kprobe *kp, struct pt_regs *regs)
{
	atomic_long_inc(&container_of(kp, struct coexist_fn, kp)->calls);
	return 0;
}

static void kp_post(struct kprobe *kp, struct pt_regs *regs,
		    unsigned long flags)
{
}

static void detach_all(void)
{
	unsigned int i;

	for (i = 0; i < ncfns; i++) {
		if (!cfns[i].on)
			continue;
		if (mode == COEXIST_IPMODIFY)
			unregister_ftrace_function(&cfns[i].ops);
		else
			unregister_kprobe(&cfns[i].kp);
		cfns[i].on = false;
	}
	mode = COEXIST_OFF;
}

static void attach_one(struct coexist_fn *f, int m)
{
	memset(&f->ops, 0, sizeof(f->ops));
	memset(&f->kp, 0, sizeof(f->kp));
	atomic_long_set(&f->calls, 0);
	if (m == COEXIST_IPMODIFY) {
		f->ops.func = ipmodify_cb;
		f->ops.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY;
		f->err = ftrace_set_filter(&f->ops, (unsigned char *)f->name,
					   strlen(f->name), 1);
		if (!f->err)
			f->err = register_ftrace_function(&f->ops);
	} else {
		f->kp.symbol_name = f->name;
		f->kp.pre_handler = kp_pre;
		f->kp.post_handler = kp_post;
		f->err = register_kprobe(&f->kp);
	}
	f->on = !f->err;
}

static int coexist_set(const char *val, const struct kernel_param *kp)
{
	struct tcptw_probe *p;
	unsigned int n;
	int m;

	m = sysfs_match_string(mode_names, val);
	if (m < 0)
		return -EINVAL;
	mutex_lock(&coexist_lock);
	detach_all();
	ncfns = 0;
	for (n = 0; m != COEXIST_OFF && (p = tcptw_probe_at(n)); n++) {
		if (p->kind == TCPTW_TRACEPOINT || p->module || !p->attached ||
		    ncfns == MAX_FNS)
			continue;
		cfns[ncfns].name = p->name;
		attach_one(&cfns[ncfns++], m);
	}
	mode = m;
	mutex_unlock(&coexist_lock);
	return 0;
}

static int coexist_get(char *buf, const struct kernel_param *kp)
{
	unsigned int i;
	int len = 0;

	mutex_lock(&coexist_lock);
	for (i = 0; i < ncfns; i++)
		len += scnprintf(buf + len, PAGE_SIZE - len, "%s\t%s\t%d\t%ld\n",
				 cfns[i].name, mode_names[mode], cfns[i].err,
				 atomic_long_read(&cfns[i].calls));
	mutex_unlock(&coexist_lock);
	return len;
}

static const struct kernel_param_ops coexist_ops = {
	.set = coexist_set,
	.get = coexist_get,
};

module_param_cb(test_coexist, &coexist_ops, NULL, 0644);
MODULE_PARM_DESC(test_coexist,
		 "test build: ipmodify|kprobe|off on every function tcptw hooks");

/* before the hooks go: nothing of this file outlives the module */
void tcptw_test_coexist_uninit(void)
{
	mutex_lock(&coexist_lock);
	detach_all();
	ncfns = 0;
	mutex_unlock(&coexist_lock);
}
