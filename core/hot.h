/* SPDX-License-Identifier: MIT */
/*
 * The code the running guest uses, grouped (issue 22): in arm64's static build (the lab's, whose
 * memory the bench measures) a function marked here goes to a section of its own that the link
 * puts at the start of the text, with the library members it calls and the read-only data both
 * use (scripts/hot-text.sh ld), so the kernel's 64 KiB fault-around windows it needs are few.
 * VMM_HOT_IDLE: the little vmm still runs while its guest idles (the waits of the main and
 * console threads, start-up's end and its release), placed first so that it shares the text's
 * first window; VMM_HOT: what every run's steady state runs (the console's, a disk's, a NIC's);
 * VMM_HOT_VF: what a passed-through device's adds, placed after. Elsewhere (x86_64's dynamic build, the
 * sanitizers') the markers are nothing. Which functions: docs/benchmarks.md's "The hot set".
 */
#ifndef VMM_HOT_H
#define VMM_HOT_H

#ifdef VMM_HOT_TEXT
/* A named section leaves a function's code as it was (but for alignment padding, and the odd
 * comparison's operands swapped): its clones (.constprop, .isra) go with it, and it is inlined as
 * before. With -ffunction-sections the rest keep a section each. */
#define VMM_HOT_IDLE __attribute__((section(".text.vmm_hot_idle")))
#define VMM_HOT __attribute__((section(".text.vmm_hot")))
#define VMM_HOT_VF __attribute__((section(".text.vmm_hot_vf")))
#else
#define VMM_HOT_IDLE
#define VMM_HOT
#define VMM_HOT_VF
#endif

#endif
