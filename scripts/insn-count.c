// SPDX-License-Identifier: GPL-2.0
/* Copyright (C) 2026 The tcptw authors. */
/*
 * insn-count: a QEMU TCG plugin for make bench. It counts every guest
 * instruction executed, on all vCPUs, and prints the running total each
 * time guest user space executes the marker instruction `xchg %bx,%bx`
 * (66 87 db, a no-op nobody else emits), as one line
 *
 *	mark N insns TOTAL
 *
 * N counts marks from 1. The line goes to QEMU's plugin log (-d plugin
 * -D FILE) and, with out=PATH, to PATH too, flushed at once so that the
 * guest can read it through the shared 9p mount while it runs.
 *
 *	qemu-system-x86_64 ... -plugin insn-count.so[,out=PATH]
 *
 * Counting: the translation callback adds the block's instruction count
 * to a per-vCPU scoreboard slot with an inline op at the block's start
 * (no helper call per block; slots per vCPU, so no atomics). A block left
 * early by an exception still counts whole: an error of a few
 * instructions per fault, the same in every mode compared. The marker's
 * callback sums the slots; another vCPU's slot is as of the block it is
 * running, which is within one block of exact.
 *
 * With prof=PATH it also profiles: each translated block gets a counter
 * of its own (a slot of a second scoreboard, an inline add per execution),
 * and at mark N the blocks that ran since the previous mark are written to
 * PATH.N, one "VADDR INSNS" line per block (its instructions times its
 * executions; a block translated twice gives two lines).
 * scripts/insn-prof.py maps them to the guest's symbols. At most PROF_MAX
 * blocks are profiled; the ones translated later count only in the total.
 *
 * Debian ships no qemu-plugin.h, so the few declarations used are below,
 * copied in meaning from QEMU's include/qemu/qemu-plugin.h at API version
 * 3 (QEMU 9.1 to 10.x load 2 to 4): scoreboards and per-vCPU inline ops
 * (version 2), qemu_plugin_insn_data() copying into a buffer (version 3).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))

/* ---- from qemu-plugin.h, API version 3 ---- */
typedef uint64_t qemu_plugin_id_t;

typedef struct qemu_info_t {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;

struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_scoreboard;

typedef struct {
	struct qemu_plugin_scoreboard *score;
	size_t offset;
} qemu_plugin_u64;

enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS,
	QEMU_PLUGIN_CB_R_REGS,
	QEMU_PLUGIN_CB_RW_REGS,
};

enum qemu_plugin_op {
	QEMU_PLUGIN_INLINE_ADD_U64,
	QEMU_PLUGIN_INLINE_STORE_U64,
};

typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index,
					    void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(
	struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
	qemu_plugin_u64 entry, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags,
					    void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
size_t qemu_plugin_insn_data(const struct qemu_plugin_insn *insn, void *dest,
			     size_t len);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
struct qemu_plugin_scoreboard *qemu_plugin_scoreboard_new(size_t element_size);
uint64_t qemu_plugin_u64_sum(qemu_plugin_u64 entry);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_outs(const char *string);
/* ---- end of qemu-plugin.h ---- */

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 3;

static const uint8_t marker[] = { 0x66, 0x87, 0xdb };	/* xchg %bx,%bx */
/* x86-64 user addresses are the lower canonical half */
#define USER_TOP	0x0000800000000000ULL

static qemu_plugin_u64 insns;
static uint64_t marks;
static FILE *out;

/* the profile (prof=PATH): per block, its start, size and last count */
#define PROF_MAX (1U << 20)
struct prof_tb {
	uint64_t vaddr;
	uint64_t n_insns;
	uint64_t last;		/* executions up to the previous mark */
};
static const char *prof_path;
static struct qemu_plugin_scoreboard *prof_score;
static struct prof_tb *prof_tb;
static uint32_t prof_n;

static void prof_dump(uint64_t mark)
{
	char path[4096];
	uint32_t i, n = __atomic_load_n(&prof_n, __ATOMIC_RELAXED);
	qemu_plugin_u64 e = { prof_score, 0 };
	uint64_t c;
	FILE *f;

	snprintf(path, sizeof(path), "%s.%" PRIu64, prof_path, mark);
	f = fopen(path, "w");
	if (n > PROF_MAX)
		n = PROF_MAX;
	for (i = 0; i < n; i++) {
		e.offset = (size_t)i * sizeof(uint64_t);
		c = qemu_plugin_u64_sum(e);
		if (c != prof_tb[i].last && f)
			fprintf(f, "%" PRIx64 " %" PRIu64 "\n", prof_tb[i].vaddr,
				(c - prof_tb[i].last) * prof_tb[i].n_insns);
		prof_tb[i].last = c;
	}
	if (f)
		fclose(f);
}

static void emit(const char *line)
{
	qemu_plugin_outs(line);
	if (out) {
		fputs(line, out);
		fflush(out);
	}
}

static void on_mark(unsigned int vcpu, void *udata)
{
	char line[96];
	uint64_t n;

	(void)vcpu;
	(void)udata;
	/* marks from two vCPUs at once may share a number; the totals differ */
	n = __atomic_add_fetch(&marks, 1, __ATOMIC_RELAXED);
	snprintf(line, sizeof(line), "mark %" PRIu64 " insns %" PRIu64 "\n", n,
		 qemu_plugin_u64_sum(insns));
	if (prof_path)
		prof_dump(n);
	emit(line);
}

static void on_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	uint8_t buf[sizeof(marker)];

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(
		tb, QEMU_PLUGIN_INLINE_ADD_U64, insns, n);
	if (prof_path) {
		/* vCPU threads translate concurrently without icount */
		uint32_t k = __atomic_fetch_add(&prof_n, 1, __ATOMIC_RELAXED);

		if (k < PROF_MAX) {
			qemu_plugin_u64 e = { prof_score, k * sizeof(uint64_t) };

			prof_tb[k].vaddr = qemu_plugin_tb_vaddr(tb);
			prof_tb[k].n_insns = n;
			qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(
				tb, QEMU_PLUGIN_INLINE_ADD_U64, e, 1);
		}
	}
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		if (qemu_plugin_insn_size(insn) != sizeof(marker) ||
		    qemu_plugin_insn_vaddr(insn) >= USER_TOP ||
		    qemu_plugin_insn_data(insn, buf, sizeof(buf)) != sizeof(buf) ||
		    memcmp(buf, marker, sizeof(marker)))
			continue;
		qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark,
						       QEMU_PLUGIN_CB_NO_REGS,
						       NULL);
	}
}

static void on_atexit(qemu_plugin_id_t id, void *udata)
{
	char line[96];

	(void)id;
	(void)udata;
	snprintf(line, sizeof(line), "exit marks %" PRIu64 " insns %" PRIu64 "\n",
		 marks, qemu_plugin_u64_sum(insns));
	emit(line);
	if (out)
		fclose(out);
	out = NULL;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info, int argc,
					   char **argv)
{
	int i;

	if (strcmp(info->target_name, "x86_64")) {
		fprintf(stderr, "insn-count: x86_64 guests only, not %s\n",
			info->target_name);
		return -1;
	}
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			out = fopen(argv[i] + 4, "a");
			if (!out) {
				perror(argv[i] + 4);
				return -1;
			}
		} else if (!strncmp(argv[i], "prof=", 5)) {
			prof_path = argv[i] + 5;
		} else {
			fprintf(stderr, "insn-count: unknown option %s\n",
				argv[i]);
			return -1;
		}
	}
	insns.score = qemu_plugin_scoreboard_new(sizeof(uint64_t));
	insns.offset = 0;
	if (prof_path) {
		prof_score = qemu_plugin_scoreboard_new(PROF_MAX *
							sizeof(uint64_t));
		prof_tb = calloc(PROF_MAX, sizeof(*prof_tb));
		if (!prof_tb)
			return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_trans);
	qemu_plugin_register_atexit_cb(id, on_atexit, NULL);
	return 0;
}
