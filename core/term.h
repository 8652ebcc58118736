/* SPDX-License-Identifier: MIT */
/* The terminal in raw mode while a guest owns it. */
#ifndef VMM_TERM_H
#define VMM_TERM_H



/* Raw terminal while a guest owns it; restored at exit and on fatal signals. */
int term_raw(void);
void term_restore(void);

#endif
