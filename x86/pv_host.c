// SPDX-License-Identifier: MIT
/*
 * The host's evidence on hardware IPI acceleration (kernel-interfaces.md 2.7): KVM has no UAPI
 * that says whether APICv/AVIC is active for a VM, so vmm reads what the host shows: the
 * kvm_amd / kvm_intel module parameters, the CPU flags, the kernel log's "AVIC enabled" and
 * "x2AVIC enabled", and the kernel version (6.18 changed what the avic parameter reads).
 * Parsing works on text so tests feed it fixtures; reading takes a root directory for the same.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "x86/x86.h"

/* klogctl types (syslog(2)); neither glibc nor the UAPI headers name them. */
#define SYSLOG_ACTION_READ_ALL 3
#define SYSLOG_ACTION_SIZE_BUFFER 10

/* A bool module parameter: Y/1 yes, N/0 no; -1 for anything else (absent, "auto"). */
static int param(const char *s)
{
	if (!s)
		return -1;
	if (s[0] == 'Y' || s[0] == 'y' || s[0] == '1')
		return 1;
	if (s[0] == 'N' || s[0] == 'n' || s[0] == '0')
		return 0;
	return -1;
}

/* Whether the first line of cpuinfo starting with key ("flags", "vmx flags") has word. */
static bool cpuinfo_has(const char *cpuinfo, const char *key, const char *word)
{
	size_t klen = strlen(key), wlen = strlen(word);
	const char *line = cpuinfo;

	while (line && *line) {
		const char *end = strchrnul(line, '\n'), *p;

		if (!strncmp(line, key, klen) && (line[klen] == '\t' || line[klen] == ' ' ||
						  line[klen] == ':')) {
			p = memchr(line, ':', end - line);
			while (p && p < end) {
				while (p < end && (*p == ' ' || *p == ':' || *p == '\t'))
					p++;
				const char *w = p;

				while (p < end && *p != ' ')
					p++;
				if ((size_t)(p - w) == wlen && !strncmp(w, word, wlen))
					return true;
			}
			return false;
		}
		line = *end ? end + 1 : NULL;
	}
	return false;
}

/* Whether the log has msg at a word boundary ("AVIC enabled" must not match "x2AVIC enabled"). */
static int log_has(const char *log, const char *msg)
{
	if (!log)
		return -1;
	for (const char *p = log; (p = strstr(p, msg)); p++)
		if (p == log || p[-1] == ' ' || p[-1] == '\n' || p[-1] == ']' || p[-1] == ':')
			return 1;
	return 0;
}

void x86_host_evidence_parse(const struct x86_host_files *f, struct x86_host_evidence *e)
{
	memset(e, 0, sizeof(*e));
	e->vendor = f->amd_loaded ? X86_KVM_AMD : f->intel_loaded ? X86_KVM_INTEL : X86_KVM_NONE;
	if (!f->release || sscanf(f->release, "%d.%d", &e->kernel_major, &e->kernel_minor) != 2)
		e->kernel_major = e->kernel_minor = 0;
	e->amd_avic = param(f->amd_avic);
	e->amd_force_avic = param(f->amd_force_avic);
	e->amd_enable_ipiv = param(f->amd_enable_ipiv);
	e->intel_apicv = param(f->intel_apicv);
	e->intel_ipiv = param(f->intel_ipiv);
	if (f->cpuinfo) {
		e->cpu_avic = cpuinfo_has(f->cpuinfo, "flags", "avic");
		e->cpu_x2avic = cpuinfo_has(f->cpuinfo, "flags", "x2avic");
		e->cpu_ipi_virt = cpuinfo_has(f->cpuinfo, "vmx flags", "ipi_virt");
	}
	e->dmesg_avic = log_has(f->dmesg, "AVIC enabled");
	e->dmesg_x2avic = log_has(f->dmesg, "x2AVIC enabled");
}

/* The whole of a small file as a string, or NULL. */
static char *slurp(const char *root, const char *path)
{
	char full[512];
	size_t cap = 4096, len = 0;
	char *buf;
	ssize_t n;
	int fd;

	snprintf(full, sizeof(full), "%s%s", strcmp(root, "/") ? root : "", path);
	fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	while (buf && (n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += n;
		if (len + 1 == cap) {
			char *nb = cap < (16u << 20) ? realloc(buf, cap * 2) : NULL;

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	close(fd);
	if (buf)
		buf[len] = 0;
	return buf;
}

static bool exists(const char *root, const char *path)
{
	char full[512];
	struct stat st;

	snprintf(full, sizeof(full), "%s%s", strcmp(root, "/") ? root : "", path);
	return stat(full, &st) == 0;
}

static char *kernel_log(void)
{
	int size = klogctl(SYSLOG_ACTION_SIZE_BUFFER, NULL, 0), n;
	char *buf;

	if (size <= 0 || !(buf = malloc(size + 1)))
		return NULL;
	n = klogctl(SYSLOG_ACTION_READ_ALL, buf, size); /* refused under dmesg_restrict */
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	return buf;
}

bool x86_host_kvm_is_pvm(const char *root)
{
	return exists(root, "/sys/module/kvm_pvm");
}

void x86_host_evidence_read(const char *root, struct x86_host_evidence *e)
{
	bool real = !strcmp(root, "/");
	struct utsname u;
	char *files[8];
	struct x86_host_files f = {
		.amd_loaded = exists(root, "/sys/module/kvm_amd"),
		.intel_loaded = exists(root, "/sys/module/kvm_intel"),
		.cpuinfo = files[0] = slurp(root, "/proc/cpuinfo"),
		.amd_avic = files[1] = slurp(root, "/sys/module/kvm_amd/parameters/avic"),
		.amd_force_avic = files[2] = slurp(root, "/sys/module/kvm_amd/parameters/force_avic"),
		.amd_enable_ipiv = files[3] = slurp(root, "/sys/module/kvm_amd/parameters/enable_ipiv"),
		.intel_apicv = files[4] = slurp(root, "/sys/module/kvm_intel/parameters/enable_apicv"),
		.intel_ipiv = files[5] = slurp(root, "/sys/module/kvm_intel/parameters/enable_ipiv"),
		.dmesg = files[6] = real ? kernel_log() : slurp(root, "/dmesg"),
		.release = files[7] = real ? (uname(&u) ? NULL : strdup(u.release))
				   : slurp(root, "/release"),
	};

	x86_host_evidence_parse(&f, e);
	for (int i = 0; i < 8; i++)
		free(files[i]);
}
