/* SPDX-License-Identifier: MIT */
#ifndef VMM_TESTS_LABUTIL_H
#define VMM_TESTS_LABUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The lab's files live in /lab (on a KVM host, scripts/check-hw.sh links a staged copy there). */
#define VMM "/lab/vmm"
/* The test guest's kernel: VMM_LAB_KERNEL (check-hw: the lab's kernel, whose modules the test
 * guest carries), else the running kernel's /boot/vmlinuz-RELEASE. A new string per call. */
char *lab_kernel(void);

struct result {
	int status; /* exit code, or 128 + signal */
	char *out, *err;
	double secs, banner_secs; /* from exec to exit, and to the guest's banner (-1: none) */
	double term_secs;	  /* run_vmm_opts: from SIGTERM to exit (-1: none sent) */
	double t0;		  /* now() just before vmm was started */
};

double now(void);
/* Runs argv (stdin /dev/null), collecting stdout/stderr; SIGKILL after timeout seconds; when
 * term_after > 0, SIGTERM that many seconds after the guest's first output. */
void run_vmm_term(char *const argv[], int timeout, int term_after, struct result *r);
void run_vmm(char *const argv[], int timeout, struct result *r);

/* What the test does with vmm's stdout and when it sends SIGTERM. */
enum stdout_mode {
	STDOUT_READ,   /* collected into r->out */
	STDOUT_UNREAD, /* a pipe nobody reads: SIGTERM once it is full */
	STDOUT_CLOSE,  /* read close_after bytes, then closed, as `vmm run | head -c N` does */
};

struct run_opts {
	int timeout;
	const char *term_on; /* STDOUT_READ: SIGTERM once stdout holds this text */
	enum stdout_mode out;
	size_t close_after;
	/* called with vmm's pid when term_on has appeared, before the SIGTERM (e.g. to read its
	 * /proc files while the guest runs) */
	void (*on_match)(int pid, void *arg);
	void *match_arg;
	const char *input_on; /* STDOUT_READ: once stdout holds this text, input goes to vmm's stdin */
	const char *input;    /* (stdin is then a pipe; /dev/null otherwise) */
	int signal;			   /* sent on term_on; 0: SIGTERM */
	void (*child)(const void *arg);	   /* run in the child before exec (namespaces, uid) */
	const void *child_arg;
	/* STDOUT_READ: each read of stdout as it arrives, secs from just before the exec */
	void (*on_out)(const char *buf, size_t len, double secs, void *arg);
	void *out_arg;
	int *pid_out; /* set to vmm's pid once it is spawned (on_out's callers read its /proc files) */
};

/* r->term_secs: from SIGTERM to exit (-1: none sent). */
void run_vmm_opts(char *const argv[], const struct run_opts *o, struct result *r);
/* argv for the lab's test guest (guest-init.sh) running step on virtio-console, 512M, 2 vCPUs,
 * followed by extra (NULL-terminated); into argv of size n. */
void test_guest_argv(char **argv, size_t n, const char *step, char *const extra[]);
void result_free(struct result *r);
/* The value after "KEY " in text (a GUEST-... marker line), copied into buf; NULL when absent. */
const char *marker(const char *text, const char *key, char *buf, size_t size);

/* Runs vmm expecting a refusal: exit status 1 and msg in its stderr. Leaves the output in r. */
bool refused_with(char *const argv[], const char *msg, struct result *r);

/* A device's line in vmm's exit summary ("NAME (00:SS.0): K kicks by ioeventfd, ..."). */
struct devstats {
	unsigned long long kicks, kick_exits, irqs, msix, bar_exits;
};

/* 0 when the summary in err has the transport line for device name at slot. */
int dev_summary(const char *err, const char *name, int slot, struct devstats *s);

/* A whole file as a string (NULL when unreadable), its length into *size when size is not NULL
 * (the file may hold NUL bytes); the caller frees it. */
char *lab_slurp(const char *path, size_t *size);

/* vmm's interrupt table in a stats JSON ("interrupts":[{...}, ...], flat objects): the row of
 * device (and host_bdf when not NULL) with that vector, copied into buf; NULL when absent. */
const char *irq_row(const char *json, const char *device, const char *host_bdf, const char *vector,
		    char *buf, size_t n);
/* In one flat JSON object: a string field into buf (NULL when absent or not a string), a number
 * field (false when absent or null). */
const char *json_str(const char *obj, const char *key, char *buf, size_t n);
bool json_u64(const char *obj, const char *key, unsigned long long *v);
/* The sum of the "count"s of a device's rows; -1 when it has none. */
long long irq_count_sum(const char *json, const char *device);

/* The lab host's kvm-arm.wfi_trap_policy= (run.sh --kernel-args), "" when not given */
void lab_wfi_policy(char *out, size_t size);

/* An --attribute report (parsed, core/json.h): the class object (cls: "blocked", "poll_hit", ...)
 * of workload ("timer", "udp"), NULL when it has none; a number field of an object, -1 when
 * absent. */
struct json;
const struct json *attrib_class(const struct json *root, const char *workload, const char *cls);
double attrib_num(const struct json *o, const char *key);

/* The pattern guest-init.sh's pattern() writes: 64 KiB chunks of "vmm-pattern-<i>\n". */
void lab_pattern(uint8_t *buf, size_t size);

/* cmd run by /bin/sh: its wait status (0: it succeeded). */
int lab_sh(const char *cmd);
/* Whether the lab host's kernel runs its GIC as a GICv4 (direct vLPI injection). */
bool lab_gicv4(void);

/* vmm ab's epoch lines (" ARM  halt polls N of M successful") of arm after warm-up: the sum of
 * their N; how many, whether each tried none (N = M = 0) and (any_tried not NULL) whether one
 * tried a poll (M > 0: whether a poll then succeeds is the timing of that epoch's halts). */
long long ab_epoch_polls(const char *out, const char *arm, int *epochs, bool *each_zero, bool *any_tried);

/* The lab host's igb PF and the VF `vmm vf create` gives it (tests/lab/labvf.c). */
#define LAB_PF "0000:00:03.0"
#define LAB_VF "0000:00:13.0"
/* Loads igb and vfio-pci, clears a failed run's VFs and creates one; the PF's netdev name into dev
 * ("" when it has none). 0, or -1 when `vmm vf create` failed. */
int lab_vf_create(char *dev, size_t n);
/* Once the VF has its IOMMU group: its MAC set and it bound to vfio-pci. 0, or -1 on a failure. */
int lab_vf_bind(void);
/* Removes the PF's VFs. */
void lab_vf_remove(void);

#endif
