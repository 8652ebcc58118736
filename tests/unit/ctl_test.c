// SPDX-License-Identifier: MIT
/* The control socket: its protocol on good and malformed requests, and the server end to end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vmm/ctl.h"

#define REQ(s) ctl_parse(s, strlen(s), &r, err, sizeof(err))

TEST(requests_parse_strictly)
{
	struct ctl_req r;
	char err[160];

	ASSERT_EQ(0, REQ("{\"cmd\":\"get\"}"));
	EXPECT_EQ(CTL_GET, r.cmd);
	ASSERT_EQ(0, REQ(" { \"cmd\" : \"set\" , \"halt_poll_ns\" : 500000 } "));
	EXPECT_EQ(CTL_SET, r.cmd);
	EXPECT_EQ(500000, r.halt_poll_ns);
	ASSERT_EQ(0, REQ("{\"halt_poll_ns\":0,\"cmd\":\"set\"}"));
	EXPECT_EQ(0, r.halt_poll_ns);
	ASSERT_EQ(0, REQ("{\"cmd\":\"stats\"}"));
	EXPECT_EQ(CTL_STATS, r.cmd);
	/* each of these is refused with a reason, and nothing is applied */
	static const char *const bad[] = {
		"", "get", "[]", "{", "{}", "{\"cmd\":\"get\"", "{\"cmd\":\"get\"}x", "{\"cmd\":get}",
		"{\"cmd\":\"reboot\"}", "{\"cmd\":\"set\"}", "{\"cmd\":\"get\",\"halt_poll_ns\":1}",
		"{\"cmd\":\"set\",\"halt_poll_ns\":-1}", "{\"cmd\":\"set\",\"halt_poll_ns\":1.5}",
		"{\"cmd\":\"set\",\"halt_poll_ns\":99999999999999999999999}",
		"{\"cmd\":\"set\",\"halt_poll_ns\":4294967296}", "{\"cmd\":\"set\",\"halt_poll_ns\":012}",
		"{\"cmd\":\"set\",\"halt_poll_ns\":\"5\"}", "{\"cmd\":\"get\",\"cmd\":\"get\"}",
		"{\"cmd\":\"get\",\"extra\":1}", "{\"cmd\":\"g\\\"et\"}", "{\"cmd\":\"get\",}",
		"{\"cmd\":\"\x01\"}", "{\"cmdcmdcmdcmdcmdcmdcmdcmdcmdcmdcmdcmd\":\"get\"}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		EXPECT_EQ(-EINVAL, REQ(bad[i])) TH_LOG("accepted: %s", bad[i]);
		EXPECT_NE(0, err[0]) TH_LOG("no reason for: %s", bad[i]);
	}
	char huge[CTL_LINE_MAX + 10];

	memset(huge, ' ', sizeof(huge));
	EXPECT_EQ(-EINVAL, ctl_parse(huge, sizeof(huge), &r, err, sizeof(err)));
}

/* ns is written by the server thread: atomic accesses, as the socket's ordering is not one
 * ThreadSanitizer sees */
struct fake_vm {
	uint64_t ns;
	int sets, fail;
};

static int f_set(void *o, uint64_t ns)
{
	struct fake_vm *v = o;

	if (v->fail)
		return -EINVAL;
	__atomic_store_n(&v->ns, ns, __ATOMIC_RELEASE);
	v->sets++;
	return 0;
}

static uint64_t f_get(void *o)
{
	return __atomic_load_n(&((struct fake_vm *)o)->ns, __ATOMIC_ACQUIRE);
}

static int f_stats(void *o, FILE *f)
{
	(void)o;
	fputs("{\"a\":\n1}", f); /* a newline inside: the reply must stay one line */
	return 0;
}

static const char *handle(struct ctl_ops *ops, const char *line)
{
	static char buf[4096];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	ctl_handle(ops, line, strlen(line), f);
	fclose(f);
	return buf;
}

TEST(handling_applies_only_valid_requests)
{
	struct fake_vm vm = { .ns = 200000 };
	struct ctl_ops ops = { f_set, f_get, NULL, f_stats, &vm, SANDBOX_OFF, NULL, NULL };

	EXPECT_STREQ("{\"ok\":true,\"halt_poll_ns\":200000}\n", handle(&ops, "{\"cmd\":\"get\"}"));
	EXPECT_STREQ("{\"ok\":true,\"halt_poll_ns\":0}\n", handle(&ops, "{\"cmd\":\"set\",\"halt_poll_ns\":0}"));
	EXPECT_EQ(1, vm.sets);
	EXPECT_NE(NULL, strstr(handle(&ops, "{\"cmd\":\"set\",\"halt_poll_ns\":x}"), "\"ok\":false"));
	EXPECT_EQ(1, vm.sets);
	vm.fail = 1;
	EXPECT_NE(NULL, strstr(handle(&ops, "{\"cmd\":\"set\",\"halt_poll_ns\":5}"), "KVM refused"));
	EXPECT_EQ(0, vm.ns);
	EXPECT_STREQ("{\"ok\":true,\"stats\":{\"a\": 1}}\n", handle(&ops, "{\"cmd\":\"stats\"}"));
	/* an error message never breaks the JSON it is in */
	const char *e = handle(&ops, "{\"cmd\":\"x\\\"y\"}");

	EXPECT_EQ(NULL, strchr(strstr(e, "error\":\"") + 8, '\\'));
}

TEST(poll_control_requests_parse_strictly)
{
	struct ctl_req r;
	char err[160];

	ASSERT_EQ(0, REQ("{\"cmd\":\"set\",\"poll_control\":0,\"vcpu\":3}"));
	EXPECT_EQ(CTL_SET, r.cmd);
	EXPECT_TRUE(r.has_poll_control);
	EXPECT_FALSE(r.has_halt_poll_ns);
	EXPECT_EQ(0, r.poll_control);
	EXPECT_EQ(3, r.vcpu);
	ASSERT_EQ(0, REQ("{\"vcpu\":\"all\",\"cmd\":\"set\",\"poll_control\":1}"));
	EXPECT_EQ(1, r.poll_control);
	EXPECT_EQ(-1, r.vcpu);
	static const char *const bad[] = {
		"{\"cmd\":\"set\",\"poll_control\":2,\"vcpu\":0}",	/* only 0 or 1 */
		"{\"cmd\":\"set\",\"poll_control\":1}",			/* which vCPU? */
		"{\"cmd\":\"set\",\"vcpu\":1}",				/* set what? */
		"{\"cmd\":\"get\",\"poll_control\":1,\"vcpu\":0}",		/* set only */
		"{\"cmd\":\"set\",\"poll_control\":1,\"vcpu\":\"some\"}",
		"{\"cmd\":\"set\",\"poll_control\":1,\"vcpu\":-1}",
		"{\"cmd\":\"set\",\"poll_control\":1,\"vcpu\":4096}",	/* past CTL_MAX_VCPU */
		"{\"cmd\":\"set\",\"poll_control\":1,\"vcpu\":0,\"vcpu\":1}",
		"{\"cmd\":\"set\",\"poll_control\":1,\"poll_control\":0,\"vcpu\":0}",
		"{\"cmd\":\"set\",\"poll_control\":1,\"vcpu\":0,\"halt_poll_ns\":5}", /* one value */
		"{\"cmd\":\"set\",\"poll_control\":true,\"vcpu\":0}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		EXPECT_EQ(-EINVAL, REQ(bad[i])) TH_LOG("accepted: %s", bad[i]);
		EXPECT_NE(0, err[0]) TH_LOG("no reason for: %s", bad[i]);
	}
}

/* A two-vCPU VM's switch, as board_poll_control keeps it. */
struct fake_pc {
	int v[2];
	int last_vcpu, sets;
};

static int f_set_pc(void *o, int vcpu, int on, char *err, size_t len)
{
	struct fake_pc *p = o;

	if (vcpu > 1) {
		snprintf(err, len, "poll-control: no vCPU %d", vcpu);
		return -EINVAL;
	}
	p->last_vcpu = vcpu;
	p->sets++;
	for (int i = vcpu < 0 ? 0 : vcpu; i <= (vcpu < 0 ? 1 : vcpu); i++)
		p->v[i] = on;
	return 0;
}

static void f_write_pc(void *o, FILE *f)
{
	struct fake_pc *p = o;

	fprintf(f, ",\"poll_control\":[%d,%d]", p->v[0], p->v[1]);
}

static uint64_t f_get_zero(void *o)
{
	(void)o;
	return 0;
}

TEST(poll_control_handling)
{
	struct fake_pc pc = { .v = { 1, 1 } };
	struct ctl_ops ops = { f_set, f_get_zero, NULL, f_stats, &pc, SANDBOX_OFF, f_set_pc, f_write_pc };
	struct ctl_ops none = { f_set, f_get_zero, NULL, f_stats, &pc, SANDBOX_OFF, NULL, NULL };

	EXPECT_STREQ("{\"ok\":true,\"poll_control\":[1,0]}\n",
		     handle(&ops, "{\"cmd\":\"set\",\"poll_control\":0,\"vcpu\":1}"));
	EXPECT_EQ(1, pc.last_vcpu);
	EXPECT_STREQ("{\"ok\":true,\"poll_control\":[0,0]}\n",
		     handle(&ops, "{\"cmd\":\"set\",\"poll_control\":0,\"vcpu\":\"all\"}"));
	EXPECT_EQ(-1, pc.last_vcpu);
	/* the VM's refusal comes back as the error, nothing changed */
	EXPECT_NE(NULL, strstr(handle(&ops, "{\"cmd\":\"set\",\"poll_control\":1,\"vcpu\":7}"),
			       "\"ok\":false,\"error\":\"poll-control: no vCPU 7\""));
	EXPECT_EQ(2, pc.sets);
	EXPECT_STREQ("{\"ok\":true,\"halt_poll_ns\":0,\"poll_control\":[0,0]}\n", handle(&ops, "{\"cmd\":\"get\"}"));
	/* a server without the switch says so */
	EXPECT_NE(NULL, strstr(handle(&none, "{\"cmd\":\"set\",\"poll_control\":1,\"vcpu\":0}"),
			       "no per-vCPU polling switch"));
	EXPECT_EQ(2, pc.sets);
}

TEST(server_end_to_end_and_path_taken)
{
	struct fake_vm vm = { .ns = 100 };
	struct ctl_ops ops = { f_set, f_get, NULL, f_stats, &vm, SANDBOX_OFF, NULL, NULL };
	struct ctl_server s, s2;
	char path[64], reply[512];

	snprintf(path, sizeof(path), "/tmp/vmm-ctl-test-%d", getpid());
	unlink(path);
	ASSERT_EQ(0, ctl_server_start(&s, path, &ops));
	ASSERT_EQ(0, ctl_request(path, "{\"cmd\":\"set\",\"halt_poll_ns\":777}", reply, sizeof(reply)));
	EXPECT_STREQ("{\"ok\":true,\"halt_poll_ns\":777}\n", reply);
	ASSERT_EQ(0, ctl_request(path, "{\"cmd\":\"get\"}", reply, sizeof(reply)));
	EXPECT_NE(NULL, strstr(reply, "777"));
	ASSERT_EQ(0, ctl_request(path, "garbage", reply, sizeof(reply)));
	EXPECT_NE(NULL, strstr(reply, "\"ok\":false"));
	EXPECT_EQ(777, __atomic_load_n(&vm.ns, __ATOMIC_ACQUIRE));
	/* a second vmm on the same path is refused while the first listens */
	EXPECT_EQ(-EADDRINUSE, ctl_server_start(&s2, path, &ops));
	ctl_server_stop(&s);
	EXPECT_NE(0, access(path, F_OK)); /* removed on stop */
	/* a stale socket file (its vmm died) is taken over */
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	strcpy(a.sun_path, path);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&a, sizeof(a)));
	close(fd);
	ASSERT_EQ(0, ctl_server_start(&s, path, &ops));
	ctl_server_stop(&s);
	/* a path that is not a socket is refused */
	FILE *f = fopen(path, "w");

	fclose(f);
	EXPECT_EQ(-EADDRINUSE, ctl_server_start(&s2, path, &ops));
	unlink(path);
}

TEST_HARNESS_MAIN
