// SPDX-License-Identifier: MIT
/*
 * The terminal in raw mode while a guest owns it, restored on every way out: normal return,
 * exit(), and fatal signals. The saved state is the one static in vmm: a signal handler has no
 * other way to reach it.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "core/hot.h"
#include "core/term.h"

static struct {
	struct termios saved;
	volatile sig_atomic_t active;
} term;

VMM_HOT void term_restore(void)
{
	if (term.active) {
		tcsetattr(STDIN_FILENO, TCSANOW, &term.saved);
		term.active = 0;
	}
}

/*
 * Installed with SA_RESETHAND: the default action is back before this runs, so the way out makes
 * no rt_sigaction, which no thread's seccomp allowlist has (the crash would be reported as a
 * refusal, exit 5, instead of the signal). The signal raised here stays blocked until the handler
 * returns, then ends vmm with its own status; a fault would recur on return anyway.
 */
VMM_HOT static void term_fatal(int sig)
{
	term_restore();
	raise(sig);
}

VMM_HOT int term_raw(void)
{
	struct termios t;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &term.saved) < 0)
		return 0;
	t = term.saved;
	/* No echo, no line editing, no signals from keys: Ctrl-C goes to the guest. */
	t.c_lflag &= ~(ICANON | ECHO | ISIG | IEXTEN);
	t.c_iflag &= ~(ICRNL | IXON | INLCR | IGNCR);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &t) < 0)
		return 0;
	term.active = 1;
	atexit(term_restore);
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE, SIGQUIT };
	struct sigaction sa = { .sa_handler = term_fatal, .sa_flags = SA_RESETHAND };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaction(fatal[i], &sa, NULL);
	return 1;
}
