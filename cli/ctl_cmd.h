/* SPDX-License-Identifier: MIT */
/* `vmm ctl` and `vmm stat`: clients of a running vmm's control socket. */
#ifndef VMM_CTL_CMD_H
#define VMM_CTL_CMD_H

int ctl_cmd(int argc, char **argv);
int stat_cmd(int argc, char **argv);

#endif
