/* SPDX-License-Identifier: MIT */
/* `vmm vf`: SR-IOV VF preparation on the command line (vf/vf.h does the work). */
#ifndef VMM_VF_CMD_H
#define VMM_VF_CMD_H

/* argv[0] is "vf"; returns the exit status (0 done, 1 refused or failed). */
int vf_cmd(int argc, char **argv);

#endif
