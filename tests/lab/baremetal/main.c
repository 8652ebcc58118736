// SPDX-License-Identifier: MIT
/*
 * The lab's bare-metal payload: a flat binary (no Image header) in the form kvm-unit-tests and
 * unikernels take. It finds the 16550 through the FDT vmm passes in x0 (compatible "ns16550a"),
 * prints a greeting and its /chosen/bootargs there, and ends through PSCI: SYSTEM_OFF, or
 * SYSTEM_RESET when the command line says exit=reset. With "nisv" on the command line it first
 * makes a load pair from the UART, an MMIO access KVM cannot decode. With "mmiobench" it times
 * 2000 reads of the pvpanic register (found the same way; a read with no side effect that always
 * exits to vmm) on the virtual counter: make bench's MMIO exit round trip; then 2000 console bytes
 * written as the kernel's 8250 console writes them (LSR polled, then THR): what one byte of a
 * verbose boot costs. With "bootend" it writes "vmm-boot-end" as a line of its own while the
 * 16550 is in its exact mode (IER 0, the greeting's bytes put it there), then spins for a second
 * without touching MMIO: vmm's console thread, not a vCPU, finds the marker in the coalesced ring.
 * Freestanding, MMU off: every access is Device memory, so FDT reads go byte by byte.
 */
#include <linux/psci.h>
#include <linux/serial_reg.h>
#include <stddef.h>
#include <stdint.h>

uint64_t psci_call(uint32_t fn);
void ldp_from(uintptr_t addr);
void payload_main(const uint8_t *fdt);

/* Flattened devicetree format (Devicetree Specification, chapter 5). */
#define FDT_MAGIC 0xd00dfeedu
#define FDT_BEGIN_NODE 1
#define FDT_END_NODE 2
#define FDT_PROP 3
#define FDT_NOP 4
#define FDT_END 9
#define FDT_MAX_DEPTH 16

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static size_t str_len(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

static int str_eq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

/* Whether the space-separated list s holds word w. */
static int has_word(const char *s, const char *w)
{
	size_t n = str_len(w);

	for (const char *p = s; *p; p++) {
		if (p != s && p[-1] != ' ')
			continue;
		size_t i = 0;

		while (i < n && p[i] == w[i])
			i++;
		if (i == n && (p[n] == ' ' || !p[n]))
			return 1;
	}
	return 0;
}

struct uart {
	volatile uint8_t *base;
};

static void uart_putc(struct uart *u, char c)
{
	while (!(u->base[UART_LSR] & UART_LSR_THRE))
		;
	u->base[UART_TX] = c;
}

static void uart_puts(struct uart *u, const char *s)
{
	for (; *s; s++) {
		if (*s == '\n')
			uart_putc(u, '\r');
		uart_putc(u, *s);
	}
}

static void uart_puthex(struct uart *u, uint64_t v)
{
	int shift = 60;

	uart_puts(u, "0x");
	while (shift > 0 && !(v >> shift))
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		uart_putc(u, "0123456789abcdef"[(v >> shift) & 0xf]);
}

struct fdt_found {
	uint64_t uart;		/* 0: none */
	uint64_t pvpanic;	/* 0: none */
	const char *bootargs;	/* NULL: none */
};

/* Whether the stringlist property value (len bytes) holds s. */
static int stringlist_has(const uint8_t *v, uint32_t len, const char *s)
{
	for (uint32_t off = 0; off < len; off += str_len((const char *)v + off) + 1)
		if (str_eq((const char *)v + off, s))
			return 1;
	return 0;
}

/* Walks the structure block once: a node's reg is read with its parent's #address-cells. */
static int fdt_scan(const uint8_t *fdt, struct fdt_found *f)
{
	if (be32(fdt) != FDT_MAGIC)
		return -1;
	const uint8_t *st = fdt + be32(fdt + 8), *strs = fdt + be32(fdt + 12);
	uint32_t size = be32(fdt + 36), off = 0;
	uint32_t acells[FDT_MAX_DEPTH];
	const uint8_t *reg[FDT_MAX_DEPTH];
	int uart[FDT_MAX_DEPTH], chosen[FDT_MAX_DEPTH];
	int depth = 0;

	acells[0] = 2;
	f->uart = f->pvpanic = 0;
	f->bootargs = NULL;
	while (off + 4 <= size) {
		uint32_t tok = be32(st + off);

		off += 4;
		if (tok == FDT_BEGIN_NODE) {
			const char *name = (const char *)st + off;

			off += (str_len(name) + 4) & ~3u;
			if (++depth >= FDT_MAX_DEPTH)
				return -1;
			acells[depth] = 2;
			reg[depth] = NULL;
			uart[depth] = 0;
			chosen[depth] = depth == 2 && str_eq(name, "chosen");
		} else if (tok == FDT_PROP) {
			uint32_t len = be32(st + off);
			const char *name = (const char *)strs + be32(st + off + 4);
			const uint8_t *v = st + off + 8;

			off += 8 + ((len + 3) & ~3u);
			if (str_eq(name, "#address-cells") && len == 4)
				acells[depth] = be32(v);
			else if (str_eq(name, "compatible"))
				uart[depth] = stringlist_has(v, len, "ns16550a") ? 1
					    : stringlist_has(v, len, "qemu,pvpanic-mmio") ? 2 : 0;
			else if (str_eq(name, "reg"))
				reg[depth] = v;
			else if (chosen[depth] && str_eq(name, "bootargs"))
				f->bootargs = (const char *)v;
		} else if (tok == FDT_END_NODE) {
			if (depth < 1)
				return -1;
			if (uart[depth] && reg[depth]) {
				uint32_t n = acells[depth - 1];
				uint64_t *to = uart[depth] == 1 ? &f->uart : &f->pvpanic;

				if (!*to)
					*to = n == 1 ? be32(reg[depth])
						: (uint64_t)be32(reg[depth]) << 32 | be32(reg[depth] + 4);
			}
			depth--;
		} else if (tok == FDT_END) {
			return 0;
		} else if (tok != FDT_NOP) {
			return -1;
		}
	}
	return -1;
}

static uint64_t counter(void)
{
	uint64_t v;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) :: "memory");
	return v;
}

static uint64_t counter_freq(void)
{
	uint64_t v;

	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(v));
	return v;
}

#define MMIO_BENCH_READS 2000

/* Reads that each exit to vmm and back: the counter ticks over them, and the frequency. */
static void mmio_bench(struct uart *u, uint64_t addr)
{
	volatile uint8_t *reg = (volatile uint8_t *)(uintptr_t)addr;
	uint64_t t0 = counter();

	for (int i = 0; i < MMIO_BENCH_READS; i++)
		(void)*reg;
	uint64_t t1 = counter();

	uart_puts(u, "baremetal: mmiobench reads=");
	uart_puthex(u, MMIO_BENCH_READS);
	uart_puts(u, " ticks=");
	uart_puthex(u, t1 - t0);
	uart_puts(u, " freq=");
	uart_puthex(u, counter_freq());
	uart_puts(u, "\n");
}

#define THR_BENCH_BYTES 2000

/* Console bytes the way Linux's 8250 console sends them: in the UART's exact mode, the LSR read
 * comes from a read-only memslot and the THR write is a coalesced-MMIO trap that never leaves the
 * kernel. The dots land on the console, the line ends before the figures. */
static void thr_bench(struct uart *u)
{
	uint64_t t0 = counter();

	for (int i = 0; i < THR_BENCH_BYTES; i++)
		uart_putc(u, '.');
	uint64_t t1 = counter();

	uart_puts(u, "\nbaremetal: thrbench bytes=");
	uart_puthex(u, THR_BENCH_BYTES);
	uart_puts(u, " ticks=");
	uart_puthex(u, t1 - t0);
	uart_puts(u, " freq=");
	uart_puthex(u, counter_freq());
	uart_puts(u, "\n");
}

/* A second on the virtual counter with no MMIO access: no vCPU exit drains the ring meanwhile. */
static void spin_a_second(void)
{
	uint64_t end = counter() + counter_freq();

	while (counter() < end)
		;
}

void payload_main(const uint8_t *fdt)
{
	struct fdt_found f = { 0, 0, NULL };

	/* Without a UART there is no way to say anything: a reset tells the test something is off. */
	if (fdt_scan(fdt, &f) < 0 || !f.uart)
		psci_call(PSCI_0_2_FN_SYSTEM_RESET);

	struct uart u = { (volatile uint8_t *)(uintptr_t)f.uart };
	const char *cmdline = f.bootargs ? f.bootargs : "";

	uart_puts(&u, "baremetal: hello from a flat binary; ns16550a at ");
	uart_puthex(&u, f.uart);
	uart_puts(&u, " (from the FDT)\nbaremetal: command line: ");
	uart_puts(&u, cmdline);
	uart_puts(&u, "\n");
	if (has_word(cmdline, "nisv")) {
		/* pvpanic, not the UART: the 16550's exact mode answers reads from a read-only page,
		 * where an ldp is an ordinary load and never exits */
		uint64_t at = f.pvpanic ? f.pvpanic : f.uart;

		uart_puts(&u, "baremetal: nisv: ldp from MMIO at ");
		uart_puthex(&u, at);
		uart_puts(&u, "\n");
		ldp_from(at);
		uart_puts(&u, "baremetal: nisv: the ldp returned\n");
	}
	if (has_word(cmdline, "mmiobench")) {
		if (f.pvpanic)
			mmio_bench(&u, f.pvpanic);
		else
			uart_puts(&u, "baremetal: mmiobench: no pvpanic in the FDT\n");
		thr_bench(&u);
	}
	if (has_word(cmdline, "bootend")) {
		uart_puts(&u, "vmm-boot-end\n");
		spin_a_second();
		uart_puts(&u, "baremetal: bootend: spun a second after the marker\n");
	}
	if (has_word(cmdline, "exit=reset")) {
		uart_puts(&u, "baremetal: SYSTEM_RESET\n");
		psci_call(PSCI_0_2_FN_SYSTEM_RESET);
	}
	uart_puts(&u, "baremetal: SYSTEM_OFF\n");
	psci_call(PSCI_0_2_FN_SYSTEM_OFF);
}
