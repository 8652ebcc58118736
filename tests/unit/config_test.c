// SPDX-License-Identifier: MIT
/* "vmm run" command line and size suffixes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "virtio/virtio.h"
#include "vmm/config.h"

#define ARGV(...) ((char *[]){ "run", __VA_ARGS__, NULL })
#define ARGC(a) ((int)(sizeof(a) / sizeof(char *)) - 1)

static int parse(struct vm_config *c, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return config_parse_run(c, argc, argv);
}

/* Parses argv with stderr captured into err (the messages vmm prints). */
static int parse_err(struct vm_config *c, char **argv, char *err, size_t size)
{
	FILE *f = tmpfile();
	int saved = dup(2), r;

	fflush(stderr);
	dup2(fileno(f), 2);
	r = parse(c, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	size_t n = fread(err, 1, size - 1, f);

	err[n] = 0;
	fclose(f);
	return r;
}

TEST(sizes)
{
	uint64_t v;

	ASSERT_EQ(0, parse_size("512M", &v));
	EXPECT_EQ(512ULL << 20, v);
	ASSERT_EQ(0, parse_size("2G", &v));
	EXPECT_EQ(2ULL << 30, v);
	ASSERT_EQ(0, parse_size("2g", &v));
	EXPECT_EQ(2ULL << 30, v);
	ASSERT_EQ(0, parse_size("1GiB", &v));
	EXPECT_EQ(1ULL << 30, v);
	ASSERT_EQ(0, parse_size("64k", &v));
	EXPECT_EQ(64ULL << 10, v);
	ASSERT_EQ(0, parse_size("1024", &v)); /* bare number: MiB */
	EXPECT_EQ(1ULL << 30, v);
	ASSERT_EQ(0, parse_size("1T", &v));
	EXPECT_EQ(1ULL << 40, v);
}

TEST(bad_sizes)
{
	uint64_t v;
	const char *bad[] = { "", "M", "-1G", "12X", "1GG", "1.5G", "99999999999999999999", "17179869184T",
			      "2 G", NULL };

	for (int i = 0; bad[i]; i++) {
		const char *s = bad[i];

		EXPECT_EQ(-EINVAL, parse_size(s, &v)) TH_LOG("'%s' accepted", s);
	}
	EXPECT_EQ(-EINVAL, parse_size(NULL, &v));
}

TEST(defaults)
{
	struct vm_config c;
	char *argv[] = { "run", NULL };

	ASSERT_EQ(0, parse(&c, argv));
	EXPECT_EQ(1, c.nr_cpus);
	EXPECT_EQ(256ULL << 20, c.mem_size);
	EXPECT_EQ(CONSOLE_SERIAL, c.console);
	EXPECT_EQ(NULL, c.kernel);
	EXPECT_EQ(NULL, c.initrd);
}

TEST(all_options)
{
	struct vm_config c;

	ASSERT_EQ(0, parse(&c, ARGV("-k", "Image", "-i", "rd.gz", "-p", "quiet", "-c", "4", "-m", "1G",
				    "--console", "none", "--dump-dtb", "x.dtb")));
	EXPECT_STREQ("Image", c.kernel);
	EXPECT_STREQ("rd.gz", c.initrd);
	EXPECT_STREQ("quiet", c.params);
	EXPECT_STREQ("x.dtb", c.dump_dtb);
	EXPECT_EQ(4, c.nr_cpus);
	EXPECT_EQ(1ULL << 30, c.mem_size);
	EXPECT_EQ(CONSOLE_NONE, c.console);
	ASSERT_EQ(0, parse(&c, ARGV("--kernel=Image", "--cpus=2", "--mem=512M", "--console=virtio")));
	EXPECT_EQ(2, c.nr_cpus);
	EXPECT_EQ(CONSOLE_VIRTIO, c.console);
}

/* x86's options are kept as given (the x86 board checks them); --pv-ipi is --pv pv-ipi=. */
TEST(x86_options)
{
	struct vm_config c;
	char big[300];

	ASSERT_EQ(0, parse(&c, ARGV("--pv", "pv-unhalt=off", "--pv-ipi", "auto", "--pv",
				    "hint-dedicated=on,poll-control=off", "--irqchip", "split", "--apic",
				    "xapic", "--no-hlt-exit")));
	EXPECT_STREQ("pv-unhalt=off,pv-ipi=auto,hint-dedicated=on,poll-control=off", c.pv);
	EXPECT_STREQ("split", c.irqchip);
	EXPECT_STREQ("xapic", c.apic);
	EXPECT_TRUE(c.no_hlt_exit);
	EXPECT_TRUE(config_has_x86_opts(&c));
	ASSERT_EQ(0, parse(&c, ARGV("-c", "2")));
	EXPECT_FALSE(config_has_x86_opts(&c));
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("--pv", big)));
}

TEST(stats_interval)
{
	struct vm_config c;
	char err[256];

	ASSERT_EQ(0, parse(&c, ARGV("--stats", "s.json", "--stats-interval", "0.5")));
	EXPECT_EQ(500, c.stats_interval_ms);
	ASSERT_EQ(0, parse(&c, ARGV("--stats-interval=2")));
	EXPECT_EQ(2000, c.stats_interval_ms);
	ASSERT_EQ(0, parse(&c, ARGV("-c", "1")));
	EXPECT_EQ(0, c.stats_interval_ms);
	static const char *const bad[] = { "0", "0.05", "x", "1s", "-1", "3601", "nan" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_GT(0, parse_err(&c, ARGV("--stats-interval", (char *)bad[i]), err, sizeof(err)));
		EXPECT_NE(NULL, strstr(err, "--stats-interval takes seconds from 0.1 to 3600")) TH_LOG("%s", err);
	}
}

/* --ctl-group: a group the system knows (name or number), only with --ctl. */
TEST(ctl_group)
{
	struct vm_config c;
	char err[256];

	ASSERT_EQ(0, parse(&c, ARGV("--ctl", "/tmp/c.sock")));
	EXPECT_FALSE(c.has_ctl_gid);
	ASSERT_EQ(0, parse(&c, ARGV("--ctl", "/tmp/c.sock", "--ctl-group", "root")));
	EXPECT_TRUE(c.has_ctl_gid);
	EXPECT_EQ(0, c.ctl_gid);
	ASSERT_EQ(0, parse(&c, ARGV("--ctl", "/tmp/c.sock", "--ctl-group", "0")));
	EXPECT_EQ(0, c.ctl_gid);
	EXPECT_EQ(-EINVAL, parse_err(&c, ARGV("--ctl", "/tmp/c.sock", "--ctl-group", "no-such-group-vmm"),
				     err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "--ctl-group no-such-group-vmm: no such group")) TH_LOG("%s", err);
	EXPECT_EQ(-EINVAL, parse_err(&c, ARGV("--ctl-group", "root"), err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "it needs --ctl PATH")) TH_LOG("%s", err);
}

/* The probe's port is added when the command line asks for the probe (a word vmm.probe=). */
TEST(probe_port_wanted)
{
	struct vm_config c;

	ASSERT_EQ(0, parse(&c, ARGV("-p", "console=ttyS0 vmm.probe=timer", "--probe-out", "/tmp/p.bin")));
	EXPECT_TRUE(config_wants_probe(&c));
	EXPECT_STREQ("/tmp/p.bin", c.probe_out);
	ASSERT_EQ(0, parse(&c, ARGV("-p", "vmm.probe=timer quiet")));
	EXPECT_TRUE(config_wants_probe(&c));
	EXPECT_EQ(NULL, c.probe_out);
	ASSERT_EQ(0, parse(&c, ARGV("-p", "console=ttyS0 xvmm.probe=timer novmm.probe=")));
	EXPECT_FALSE(config_wants_probe(&c));
	ASSERT_EQ(0, parse(&c, ARGV("-c", "1")));
	EXPECT_FALSE(config_wants_probe(&c)); /* the default command line has no probe */
}

TEST(disks)
{
	struct vm_config c;

	ASSERT_EQ(0, parse(&c, ARGV("-d", "a.img", "--disk", "/x/b.img,ro", "-d", "with,comma.img,ro")));
	ASSERT_EQ(3, c.nr_disks);
	EXPECT_STREQ("a.img", c.disk[0].path);
	EXPECT_FALSE(c.disk[0].ro);
	EXPECT_STREQ("/x/b.img", c.disk[1].path);
	EXPECT_TRUE(c.disk[1].ro);
	EXPECT_STREQ("with,comma.img", c.disk[2].path);
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("-d", ",ro")));
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("-d", "")));
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("-d", "1", "-d", "2", "-d", "3", "-d", "4", "-d", "5", "-d", "6",
					  "-d", "7", "-d", "8", "-d", "9")));
}

/* Any path is a path: only a trailing ",ro" is an option. */
TEST(disk_path_with_comma)
{
	struct vm_config c;

	ASSERT_EQ(0, parse(&c, ARGV("-d", "/tmp/a,b.img", "-d", "/tmp/a,b.img,ro", "-d", "x.img,rw")));
	ASSERT_EQ(3, c.nr_disks);
	EXPECT_STREQ("/tmp/a,b.img", c.disk[0].path);
	EXPECT_FALSE(c.disk[0].ro);
	EXPECT_STREQ("/tmp/a,b.img", c.disk[1].path);
	EXPECT_TRUE(c.disk[1].ro);
	EXPECT_STREQ("x.img,rw", c.disk[2].path);
	EXPECT_FALSE(c.disk[2].ro);
}

TEST(nets)
{
	struct vm_config c;

	ASSERT_EQ(0, parse(&c, ARGV("--net", "tap=tap0", "--net", "tap=t1,mac=02:00:00:aa:bb:cc")));
	ASSERT_EQ(2, c.nr_nets);
	EXPECT_STREQ("tap0", c.net[0].tap);
	EXPECT_EQ(0x52, c.net[0].mac[0]);
	EXPECT_EQ(0x56, c.net[0].mac[5]);
	EXPECT_EQ(0xcc, c.net[1].mac[5]);
	EXPECT_EQ(0x02, c.net[1].mac[0]);
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("--net", "mac=02:00:00:00:00:01")));	/* no tap */
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("--net", "tap=x,mac=01:00:00:00:00:01"))); /* multicast */
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("--net", "tap=x,mac=02:00:00:00:00")));
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("--net", "tap=a-name-that-is-too-long")));
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("--net", "user")));
}

/* vhost=on|off and vhost-dev=PATH: the default is auto (vhost-net where it opens). */
TEST(net_vhost_options)
{
	struct vm_config c;

	ASSERT_EQ(0, parse(&c, ARGV("--net", "tap=t0", "--net", "tap=t1,vhost=on", "--net", "tap=t2,vhost=off",
				    "--net", "vhost-dev=/tmp/vh,tap=t3,vhost=on")));
	ASSERT_EQ(4, c.nr_nets);
	EXPECT_EQ(NET_VHOST_AUTO, c.net[0].vhost);
	EXPECT_STREQ("", c.net[0].vhost_dev);
	EXPECT_EQ(NET_VHOST_ON, c.net[1].vhost);
	EXPECT_EQ(NET_VHOST_OFF, c.net[2].vhost);
	EXPECT_EQ(NET_VHOST_ON, c.net[3].vhost);
	EXPECT_STREQ("/tmp/vh", c.net[3].vhost_dev);
	EXPECT_STREQ("t3", c.net[3].tap);
	char err[512];

	EXPECT_EQ(-EINVAL, parse_err(&c, ARGV("--net", "tap=t0,vhost=yes"), err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "vhost=on|off")) TH_LOG("%s", err);
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("--net", "tap=t0,vhost")));
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("--net", "tap=t0,vhost-dev=relative")));
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("--net", "tap=t0,vhost-dev=")));
	char longp[200] = "tap=t0,vhost-dev=/";

	memset(longp + strlen(longp), 'a', 120);
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("--net", longp))); /* past vhost_dev: refused, not cut */
}

TEST(kernel_format)
{
	struct vm_config c;

	ASSERT_EQ(0, parse(&c, ARGV("-k", "x")));
	EXPECT_EQ(KERNEL_FORMAT_AUTO, c.kernel_format);
	ASSERT_EQ(0, parse(&c, ARGV("-k", "x", "--kernel-format", "flat")));
	EXPECT_EQ(KERNEL_FORMAT_FLAT, c.kernel_format);
	ASSERT_EQ(0, parse(&c, ARGV("--kernel-format=image")));
	EXPECT_EQ(KERNEL_FORMAT_IMAGE, c.kernel_format);
	ASSERT_EQ(0, parse(&c, ARGV("--kernel-format", "auto")));
	EXPECT_EQ(KERNEL_FORMAT_AUTO, c.kernel_format);
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("--kernel-format", "elf")));
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("--kernel-format")));
}

/* A --net value longer than any fixed buffer is parsed whole or refused, never cut short. */
TEST(net_long_argument)
{
	struct vm_config c;
	char arg[400], err[1024];
	int n = snprintf(arg, sizeof(arg), "tap=t0");

	while (n < 200)
		arg[n++] = ',';
	snprintf(arg + n, sizeof(arg) - n, "mac=02:00:00:00:00:99");
	ASSERT_EQ(0, parse(&c, ARGV("--net", arg)));
	EXPECT_EQ(0x99, c.net[0].mac[5]) TH_LOG("the mac past character 127 was dropped");
	/* a bad item past character 127 is refused, not silently dropped */
	snprintf(arg + n, sizeof(arg) - n, "bogus=1");
	EXPECT_EQ(-EINVAL, parse_err(&c, ARGV("--net", arg), err, sizeof(err)));
}

/* GNU getopt keeps its place inside a cluster between calls unless optind is reset to 0: a parse
 * that stopped at -h in "-hc2" must not leak "c2" into the next one. */
TEST(parse_twice)
{
	struct vm_config c;

	ASSERT_EQ(1, parse(&c, ARGV("-hc2")));
	ASSERT_EQ(0, parse(&c, ARGV("-m", "1G")));
	EXPECT_EQ(1, c.nr_cpus);
	EXPECT_EQ(1ULL << 30, c.mem_size);
	ASSERT_EQ(0, parse(&c, ARGV("-c", "3", "-d", "x.img")));
	EXPECT_EQ(3, c.nr_cpus);
	EXPECT_EQ(1, c.nr_disks);
}

/* -c's limit is the board's redistributor room (123), the one the README documents. */
TEST(cpu_limit)
{
	struct vm_config c;
	char err[1024];

	ASSERT_EQ(0, parse(&c, ARGV("-c", "123")));
	EXPECT_EQ(123, c.nr_cpus);
	EXPECT_EQ(-EINVAL, parse_err(&c, ARGV("-c", "124"), err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "123")) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "redistributor")) TH_LOG("the message must name the limit: %s", err);
}

TEST(bad_options)
{
	struct vm_config c;

	EXPECT_EQ(-EINVAL, parse(&c, ARGV("-c", "0")));
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("-c", "124")));
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("-c", "2x")));
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("-m", "32M"))); /* below the 64M floor */
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("-m", "lots")));
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("--console", "vga")));
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("--frobnicate")));
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("-k")));
	EXPECT_EQ(-EINVAL, parse(&c, ARGV("stray")));
	EXPECT_EQ(1, parse(&c, ARGV("--help")));
}

/* --cpu (arm64's vCPU features): auto unless given, later values win, bad ones named. */
TEST(cpu_features)
{
	static const struct { const char *arg, *msg; } bad[] = {
		{ "sve=yes", "sve= takes on, off, auto or the largest vector length" },
		{ "sve=100", "a multiple of 128 from 128 to 2048" },
		{ "sve=4096", "a multiple of 128" },
		{ "sve=256x", "not '256x'" },
		{ "pmu", "'pmu' needs a value" },
		{ "pmu=", "pmu= takes on, off or auto, not ''" },
		{ "mte=on", "unknown feature 'mte' (sve, pauth and pmu exist)" },
		{ "pauth=on,", "a trailing comma" },
		{ "pauth=on,,pmu=off", "an empty item" },
		{ "", "not an empty string" },
	};
	struct vm_config c;
	char err[512];

	ASSERT_EQ(0, parse(&c, ARGV("-c", "2")));
	EXPECT_FALSE(c.cpu.given);
	EXPECT_FALSE(config_has_arm64_opts(&c));
	EXPECT_EQ(CPU_WANT_AUTO, c.cpu.sve);
	EXPECT_EQ(CPU_WANT_AUTO, c.cpu.pauth);
	EXPECT_EQ(CPU_WANT_AUTO, c.cpu.pmu);
	ASSERT_EQ(0, parse(&c, ARGV("--cpu", "sve=off,pauth=on", "--cpu", "pmu=off")));
	EXPECT_TRUE(config_has_arm64_opts(&c));
	EXPECT_EQ(CPU_WANT_OFF, c.cpu.sve);
	EXPECT_EQ(CPU_WANT_ON, c.cpu.pauth);
	EXPECT_EQ(CPU_WANT_OFF, c.cpu.pmu);
	ASSERT_EQ(0, parse(&c, ARGV("--cpu=sve=512,pmu=auto")));
	EXPECT_EQ(CPU_WANT_ON, c.cpu.sve);
	EXPECT_EQ(512u, c.cpu.sve_max_bits);
	EXPECT_EQ(CPU_WANT_AUTO, c.cpu.pmu);
	ASSERT_EQ(0, parse(&c, ARGV("--cpu", "sve=512", "--cpu", "sve=on")));
	EXPECT_EQ(0u, c.cpu.sve_max_bits); /* the later one: the host's largest */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, parse_err(&c, ARGV("--cpu", (char *)bad[i].arg), err, sizeof(err)));
		EXPECT_NE(NULL, strstr(err, bad[i].msg)) TH_LOG("--cpu '%s': %s", bad[i].arg, err);
	}
}

TEST(vfio_backend)
{
	struct vm_config c;
	char err[512];

	ASSERT_EQ(0, parse(&c, ARGV("--vfio", "0000:00:13.0")));
	EXPECT_EQ(VFIO_BACKEND_AUTO, c.vfio_backend);
	ASSERT_EQ(0, parse(&c, ARGV("--vfio-backend", "legacy")));
	EXPECT_EQ(VFIO_BACKEND_LEGACY, c.vfio_backend);
	ASSERT_EQ(0, parse(&c, ARGV("--vfio-backend=iommufd")));
	EXPECT_EQ(VFIO_BACKEND_IOMMUFD, c.vfio_backend);
	ASSERT_EQ(0, parse(&c, ARGV("--vfio-backend", "auto")));
	EXPECT_EQ(VFIO_BACKEND_AUTO, c.vfio_backend);
	EXPECT_GT(0, parse_err(&c, ARGV("--vfio-backend", "type1"), err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "--vfio-backend takes auto, legacy or iommufd, not 'type1'")) TH_LOG("%s", err);
}

TEST_HARNESS_MAIN
