/*
 * etch_count: a QEMU TCG plugin counting executed guest instructions, in
 * total and per "bucket". The firmware selects a bucket by storing to
 * markers[k] (a static u32 array whose address and length are plugin
 * arguments); every instruction executed afterwards is charged to bucket k
 * until the next such store (before the first one: bucket n - 1). Counts are exact and deterministic: one
 * callback per executed instruction, no sampling.
 *
 * Build: gcc -shared -fPIC -O2 -I<dir with qemu/qemu-plugin.h> \
 *            $(pkg-config --cflags glib-2.0) -o libetch_count.so etch_count.c
 * Use:   qemu-system-arm ... -plugin ./libetch_count.so,markers=0x20000000,n=256,out=counts.txt
 * Output (to `out`): "total N" then "bucket K N" for every non-empty bucket.
 * Optional `pcprof=FILE`: also writes "ADDR COUNT" (hex address) for every
 * executed instruction address in the 4 MiB-aligned window of the first one
 * executed (0 on MPS2, the ITCM alias 0x10000000 on AN547), to find hot loops.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu/qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_BUCKETS 1024

static uint64_t markers_base;
static uint64_t n_buckets = 256;
static uint64_t counts[MAX_BUCKETS];
static uint64_t total;
static unsigned current;
static char out_path[512] = "etch_counts.txt";
static char pcprof_path[512];
#define PCPROF_SPAN (4u << 20)
static uint64_t pc_bucket = UINT64_MAX; /* pcbucket=K: profile bucket K only */
static uint64_t *pc_counts; /* per halfword address, when pcprof is on */
/* The PCPROF_SPAN-aligned window holding the first executed instruction
 * (0 on the MPS2 boards; 0x10000000 on AN547, whose code runs from the
 * ITCM's secure alias). */
static uint64_t pc_base = UINT64_MAX;

static void on_insn(unsigned int vcpu, void *udata)
{
    (void)vcpu;
    total++;
    counts[current]++;
    if (pc_counts && (pc_bucket == UINT64_MAX || pc_bucket == current)) {
        uint64_t pc = (uint64_t)(uintptr_t)udata;
        if (pc_base == UINT64_MAX) {
            pc_base = pc & ~(uint64_t)(PCPROF_SPAN - 1);
        }
        if (pc - pc_base < PCPROF_SPAN) {
            pc_counts[(pc - pc_base) / 2]++;
        }
    }
}

static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
    (void)vcpu;
    (void)udata;
    if (!qemu_plugin_mem_is_store(info)) {
        return;
    }
    if (vaddr >= markers_base && vaddr < markers_base + 4 * n_buckets) {
        current = (unsigned)((vaddr - markers_base) / 4);
    }
}

static void on_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        void *pc = (void *)(uintptr_t)qemu_plugin_insn_vaddr(insn);
        qemu_plugin_register_vcpu_insn_exec_cb(insn, on_insn, QEMU_PLUGIN_CB_NO_REGS, pc);
        qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_W, NULL);
    }
}

static void on_plugin_exit(qemu_plugin_id_t id, void *p)
{
    (void)id;
    (void)p;
    FILE *f = fopen(out_path, "w");
    if (!f) {
        return;
    }
    fprintf(f, "total %" PRIu64 "\n", total);
    for (uint64_t k = 0; k < n_buckets; k++) {
        if (counts[k]) {
            fprintf(f, "bucket %" PRIu64 " %" PRIu64 "\n", k, counts[k]);
        }
    }
    fclose(f);
    if (pc_counts && (f = fopen(pcprof_path, "w"))) {
        for (uint64_t a = 0; a < PCPROF_SPAN / 2; a++) {
            if (pc_counts[a]) {
                fprintf(f, "%" PRIx64 " %" PRIu64 "\n", pc_base + a * 2, pc_counts[a]);
            }
        }
        fclose(f);
    }
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "markers=", 8) == 0) {
            markers_base = strtoull(argv[i] + 8, NULL, 0);
        } else if (strncmp(argv[i], "n=", 2) == 0) {
            n_buckets = strtoull(argv[i] + 2, NULL, 0);
        } else if (strncmp(argv[i], "out=", 4) == 0) {
            snprintf(out_path, sizeof out_path, "%s", argv[i] + 4);
        } else if (strncmp(argv[i], "pcprof=", 7) == 0) {
            snprintf(pcprof_path, sizeof pcprof_path, "%s", argv[i] + 7);
            pc_counts = calloc(PCPROF_SPAN / 2, sizeof *pc_counts);
            if (!pc_counts) {
                return -1;
            }
        } else if (strncmp(argv[i], "pcbucket=", 9) == 0) {
            pc_bucket = strtoull(argv[i] + 9, NULL, 0);
        } else {
            fprintf(stderr, "etch_count: unknown argument %s\n", argv[i]);
            return -1;
        }
    }
    if (n_buckets == 0 || n_buckets > MAX_BUCKETS) {
        fprintf(stderr, "etch_count: n must be 1..%d\n", MAX_BUCKETS);
        return -1;
    }
    /* Until the firmware's first marker store (reset handler, .data/.bss
     * initialisation, parsing before load) instructions are charged to the
     * last bucket (idle), not to bucket 0 (runtime between ops). */
    current = (unsigned)(n_buckets - 1);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
    qemu_plugin_register_atexit_cb(id, on_plugin_exit, NULL);
    return 0;
}
