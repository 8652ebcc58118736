/* SPDX-License-Identifier: MIT */
/*
 * The experiment engine's entry point: `vmm ab`, A/B tests of vmm run configurations on the guest
 * latency probe (ab/ab.c). The engine is a client of vmm: it runs `vmm run` and talks to its
 * control socket; nothing in vmm/ calls into ab/ but main.
 */
#ifndef VMM_AB_AB_CMD_H
#define VMM_AB_AB_CMD_H

int ab_cmd(int argc, char **argv);

#endif
