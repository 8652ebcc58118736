// SPDX-License-Identifier: MIT
/* vm_request_stop wakes vm_run's main thread at once (its poll's eventfd), not at the next 100 ms
 * tick; and writes nothing into a VM that is not running (a test's or fuzzer's zeroed VM). */
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "core/vm.h"

static struct vm vm; /* large: not on the stack */

static bool readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

TEST(stop_wakes_the_waiting_main_thread)
{
	memset(&vm, 0, sizeof(vm));
	atomic_init(&vm.exit_code, -1);
	vm.defer_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ASSERT_LE(0, vm.defer_fd);
	atomic_store(&vm.main_waits, true);
	EXPECT_FALSE(readable(vm.defer_fd));
	vm_request_stop(&vm, 0);
	EXPECT_TRUE(atomic_load(&vm.stop));
	EXPECT_EQ(0, atomic_load(&vm.exit_code));
	EXPECT_TRUE(readable(vm.defer_fd));
	close(vm.defer_fd);
}

TEST(stop_of_a_vm_not_running_writes_nothing)
{
	int fds[2];

	memset(&vm, 0, sizeof(vm));
	atomic_init(&vm.exit_code, -1);
	/* a pipe's read end where the eventfd would be: a write to it would fail, a write to its
	 * write end would show; main_waits is false, so neither happens */
	ASSERT_EQ(0, pipe(fds));
	vm.defer_fd = fds[1];
	vm_request_stop(&vm, 3);
	EXPECT_TRUE(atomic_load(&vm.stop));
	EXPECT_EQ(3, atomic_load(&vm.exit_code));
	EXPECT_FALSE(readable(fds[0]));
	close(fds[0]);
	close(fds[1]);
}

TEST_HARNESS_MAIN
