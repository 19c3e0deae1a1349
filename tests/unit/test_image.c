/* test_image.c - image.c: module load order from modules.dep, the kernel
 * command line, the bzImage release, and building/caching a real image. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "guest/image.h"
#include "util.h"
#include "testutil.h"

static void put(const char *dir, const char *rel, const char *text)
{
	char *p = xasprintf("%s/%s", dir, rel), *d = xstrdup(p);
	FILE *f;

	*strrchr(d, '/') = '\0';
	assert_int_equal(mkdir_p(d, 0755), 0);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(p);
	free(d);
}

/* Shaped like Debian's 6.12 cloud kernel's modules.dep. */
static const char modules_dep[] =
	"kernel/arch/x86/crypto/crc32c-intel.ko.xz:\n"
	"kernel/fs/xfs/xfs.ko.xz: kernel/lib/libcrc32c.ko.xz\n"
	"kernel/fs/btrfs/btrfs.ko.xz: kernel/crypto/xor.ko.xz kernel/lib/raid6/raid6_pq.ko.xz kernel/lib/libcrc32c.ko.xz\n"
	"kernel/lib/libcrc32c.ko.xz:\n"
	"kernel/drivers/block/virtio_blk.ko.xz:\n"
	"kernel/crypto/xor.ko.xz:\n"
	"kernel/lib/raid6/raid6_pq.ko.xz:\n"
	"kernel/fs/erofs/erofs.ko.xz: kernel/lib/libcrc32c.ko.xz\n";

static void test_module_order(void **state)
{
	struct tmpdir *td = *state;
	char *order = NULL, **src = NULL;
	struct buf err = BUF_INIT;

	put(td->path, "modules.dep", modules_dep);
	assert_int_equal(image_module_order(&order, &src, td->path, image_wanted_modules,
					    &err), 0);
	/* virtio_pci, virtio_console, ext4 are built in (not in modules.dep):
	 * skipped. Dependencies come before their users, once per tag. */
	assert_string_equal(order,
			    "* virtio_blk.ko\n"
			    "ext4 crc32c-intel.ko\n"
			    "xfs crc32c-intel.ko\n"
			    "xfs libcrc32c.ko\n"
			    "xfs xfs.ko\n"
			    "btrfs crc32c-intel.ko\n"
			    "btrfs xor.ko\n"
			    "btrfs raid6_pq.ko\n"
			    "btrfs libcrc32c.ko\n"
			    "btrfs btrfs.ko\n");
	assert_non_null(src[0]);
	assert_string_equal(strrchr(src[0], '/'), "/virtio_blk.ko.xz");
	assert_non_null(strstr(src[0], "kernel/drivers/block/"));
	size_t n = 0;
	while (src[n])
		free(src[n++]);
	assert_int_equal(n, 10);
	free(src);
	free(order);

	put(td->path, "modules.dep", "kernel/fs/xfs/xfs.ko.xz kernel/lib/libcrc32c.ko.xz\n");
	assert_int_equal(image_module_order(&order, NULL, td->path, image_wanted_modules,
					    &err), -EINVAL);
	assert_non_null(strstr(buf_str(&err), "modules.dep:1: expected 'path: deps...'"));

	char *missing = xasprintf("%s/nowhere", td->path);
	assert_int_equal(image_module_order(&order, NULL, missing, image_wanted_modules,
					    &err), -ENOENT);
	assert_non_null(strstr(buf_str(&err), "cannot read"));
	free(missing);
	buf_release(&err);
}

static void test_cmdline(void **state)
{
	const struct knob knobs[] = { { "rate_mbps", "40" }, { "nfiles", "100" },
				      { "shutdown_file", "a b,c%" } };
	const struct knob sysctls[] = { { "vm.dirty_bytes", "100000000" } };
	struct run_params rp = {
		.mkfs_opts = "-m crc=1,finobt=1", .mount_opts = "noatime,logbsize=256k",
		.sysctls = sysctls, .nsysctls = 1, .workload = "wb-handover", .knobs = knobs,
		.nknobs = 3,
	};
	struct guest_settings gs = { .fs = "xfs", .run = &rp, .port = "kcanary" };
	char *line = NULL;
	struct buf err = BUF_INIT;

	(void)state;
	assert_int_equal(image_cmdline(&line, &gs, &err), 0);
	assert_string_equal(line,
			    "console=ttyS0 loglevel=5 panic=-1 rdinit=/init kc.fs=xfs "
			    "kc.mkfs=-m%20crc=1,finobt=1 kc.mnt=noatime,logbsize=256k "
			    "kc.sysctl=vm.dirty_bytes=100000000 kc.workload=wb-handover "
			    "kc.knobs=rate_mbps=40,nfiles=100,shutdown_file=a%20b%2Cc%25 kc.port=kcanary");
	free(line);
	line = NULL;

	gs.fs = "zfs";
	assert_int_equal(image_cmdline(&line, &gs, &err), -EINVAL);
	assert_string_equal(buf_str(&err), "unknown filesystem 'zfs': expected ext4, xfs or btrfs");
	gs.fs = NULL;

	const struct knob bad[] = { { "rate_mbps", NULL } };
	rp.knobs = bad;
	rp.nknobs = 1;
	assert_int_equal(image_cmdline(&line, &gs, &err), -EINVAL);
	assert_string_equal(buf_str(&err), "knobs setting 'rate_mbps' is not key=value");
	const struct knob no_key[] = { { "", "40" } };
	rp.knobs = no_key;
	assert_int_equal(image_cmdline(&line, &gs, &err), -EINVAL);
	assert_string_equal(buf_str(&err), "knobs setting '=40' is not key=value");

	char *big = xmalloc(2100);
	memset(big, 'x', 2099);
	big[2099] = '\0';
	const struct knob long_knobs[] = { { "k", big + 2 } };
	rp.knobs = long_knobs;
	assert_int_equal(image_cmdline(&line, &gs, &err), -E2BIG);
	assert_non_null(strstr(buf_str(&err), "longer than the kernel's 2047"));
	assert_null(line);
	free(big);
	buf_release(&err);
}

static void test_kernel_release(void **state)
{
	struct tmpdir *td = *state;
	unsigned char img[0x1000] = { 0 };
	char rel[128], *path = xasprintf("%s/bzImage", td->path);
	struct buf err = BUF_INIT;
	FILE *f;

	/* setup header: "HdrS" at 0x202, kernel_version at 0x20e (+0x200) */
	memcpy(img + 0x202, "HdrS", 4);
	img[0x20e] = 0x00;
	img[0x20f] = 0x08;                 /* 0x800 + 0x200 = 0xa00 */
	strcpy((char *)img + 0xa00, "6.12.117+deb12-cloud-amd64 (debian-kernel@lists.debian.org) #1");
	f = fopen(path, "w");
	fwrite(img, 1, sizeof(img), f);
	fclose(f);
	assert_int_equal(image_kernel_release(rel, sizeof(rel), path, &err), 0);
	assert_string_equal(rel, "6.12.117+deb12-cloud-amd64");

	f = fopen(path, "w");
	fputs("this is not a kernel\n", f);
	fclose(f);
	assert_int_equal(image_kernel_release(rel, sizeof(rel), path, &err), -EINVAL);
	char *want = xasprintf("kernel image '%s' is not a bzImage: no 'HdrS' setup header at offset 0x202", path);
	assert_string_equal(buf_str(&err), want);
	free(want);

	unlink(path);
	assert_int_equal(image_kernel_release(rel, sizeof(rel), path, &err), -ENOENT);
	free(path);
	buf_release(&err);
}

static int count_lines_with(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* A real image from the host's busybox, mkfs tools and a fixture module
 * tree; needs root for /dev/console (mknod). */
static void test_build_and_cache(void **state)
{
	struct tmpdir *td = *state;
	char *mods = xasprintf("%s/mods", td->path), *home = xasprintf("%s/home", td->path);
	char *init = xasprintf("%s/init", td->path), *path1 = NULL, *path2 = NULL, *path3 = NULL;
	char *cmd, *listing = NULL;
	struct buf err = BUF_INIT;
	struct stat st1, st2;

	if (geteuid() != 0 || access("/bin/busybox", X_OK) || access("/usr/sbin/mkfs.xfs", X_OK))
		skip();
	put(mods, "modules.dep",
	    "kernel/drivers/block/virtio_blk.ko.xz:\n"
	    "kernel/fs/xfs/xfs.ko.xz: kernel/lib/libcrc32c.ko.xz\n"
	    "kernel/lib/libcrc32c.ko.xz:\n");
	put(mods, "kernel/drivers/block/virtio_blk.ko", "virtio_blk module bytes\n");
	put(mods, "kernel/fs/xfs/xfs.ko", "xfs module bytes\n");
	put(mods, "kernel/lib/libcrc32c.ko", "libcrc32c module bytes\n");
	cmd = xasprintf("xz -f %s/kernel/drivers/block/virtio_blk.ko %s/kernel/fs/xfs/xfs.ko "
			"%s/kernel/lib/libcrc32c.ko", mods, mods, mods);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	put(td->path, "init", "#!/bin/busybox sh\necho fixture init\n");

	/* /bin/busybox stands in for the agent: any executable will do. */
	struct image_spec spec = { .home = home, .agent_path = "/bin/busybox",
				   .modules_dir = mods, .init_path = init };
	assert_int_equal(image_build(&path1, &spec, &err), 0);
	assert_int_equal(stat(path1, &st1), 0);
	cmd = xasprintf("cpio -t --quiet < '%s' > '%s/list' && cpio -i --quiet < '%s' "
			"--to-stdout lib/modules/kc/xfs.ko lib/modules/kc/order init >> '%s/list'",
			path1, td->path, path1, td->path);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	cmd = xasprintf("%s/list", td->path);
	assert_int_equal(read_file(&listing, NULL, cmd, 1 << 20), 0);
	free(cmd);
	static const char *const want[] = {
		"\ninit\n", "bin/busybox\n", "bin/kcanary-agent\n", "sbin/mkfs.ext4\n",
		"sbin/mkfs.xfs\n", "sbin/mkfs.btrfs\n", "dev/console\n", "dev/null\n",
		"lib/modules/kc/order\n", "lib/modules/kc/xfs.ko\n", "lib/modules/kc/virtio_blk.ko\n",
		"lib/x86_64-linux-gnu/libc.so.6\n", "ld-linux-x86-64.so.2\n",
		"xfs module bytes\n",             /* decompressed */
		"* virtio_blk.ko\nxfs libcrc32c.ko\nxfs xfs.ko\n",
		"echo fixture init\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
		if (!strstr(listing, want[i]))
			fprintf(stderr, "missing '%s' in:\n%s\n", want[i], listing);
		assert_non_null(strstr(listing, want[i]));
	}
	assert_int_equal(count_lines_with(listing, "btrfs.ko"), 0);

	/* Same inputs: the cached image, untouched. */
	assert_int_equal(image_build(&path2, &spec, &err), 0);
	assert_string_equal(path1, path2);
	assert_int_equal(stat(path2, &st2), 0);
	assert_int_equal(st1.st_mtim.tv_nsec, st2.st_mtim.tv_nsec);
	assert_int_equal(st1.st_ino, st2.st_ino);

	/* A changed init: a new image. */
	put(td->path, "init", "#!/bin/busybox sh\necho changed init\n");
	assert_int_equal(image_build(&path3, &spec, &err), 0);
	assert_string_not_equal(path1, path3);

	/* A missing agent: a clear error, no image. */
	char *p4 = NULL;
	spec.agent_path = "/nonexistent/kcanary-agent";
	assert_int_equal(image_build(&p4, &spec, &err), -ENOENT);
	assert_non_null(strstr(buf_str(&err), "cannot use '/nonexistent/kcanary-agent' in the guest image"));
	assert_null(p4);

	free(listing);
	free(path1);
	free(path2);
	free(path3);
	free(mods);
	free(home);
	free(init);
	buf_release(&err);
}

/* The image's file list, then its lib/modules/kc/order (new string). */
static char *image_listing(const char *dir, const char *image)
{
	char *cmd = xasprintf("cpio -t --quiet < '%s' > '%s/list' && cpio -i --quiet < '%s' "
			      "--to-stdout lib/modules/kc/order >> '%s/list'", image, dir, image, dir);
	char *path = xasprintf("%s/list", dir), *text = NULL;

	assert_int_equal(system(cmd), 0);
	assert_int_equal(read_file(&text, NULL, path, 1 << 20), 0);
	free(cmd);
	free(path);
	return text;
}

/* A run's image (spec.fs): only that filesystem's mkfs tool and modules,
 * the --rootfs modules only with spec.rootfs, and an image of its own. */
static void test_build_per_fs(void **state)
{
	struct tmpdir *td = *state;
	char *mods = xasprintf("%s/mods", td->path), *home = xasprintf("%s/home", td->path);
	char *all = NULL, *ext4 = NULL, *xfs = NULL, *xfs_rfs = NULL, *l;
	struct buf err = BUF_INIT;

	if (geteuid() != 0 || access("/bin/busybox", X_OK) || access("/usr/sbin/mkfs.xfs", X_OK))
		skip();
	put(mods, "modules.dep",
	    "kernel/drivers/block/virtio_blk.ko:\n"
	    "kernel/fs/xfs/xfs.ko: kernel/lib/libcrc32c.ko\n"
	    "kernel/lib/libcrc32c.ko:\n"
	    "kernel/fs/squashfs/squashfs.ko:\n");
	put(mods, "kernel/drivers/block/virtio_blk.ko", "virtio_blk module bytes\n");
	put(mods, "kernel/fs/xfs/xfs.ko", "xfs module bytes\n");
	put(mods, "kernel/lib/libcrc32c.ko", "libcrc32c module bytes\n");
	put(mods, "kernel/fs/squashfs/squashfs.ko", "squashfs module bytes\n");

	struct image_spec spec = { .home = home, .agent_path = "/bin/busybox", .modules_dir = mods };
	assert_int_equal(image_build(&all, &spec, &err), 0);
	spec.fs = "ext4";
	assert_int_equal(image_build(&ext4, &spec, &err), 0);
	spec.fs = "xfs";
	assert_int_equal(image_build(&xfs, &spec, &err), 0);
	spec.rootfs = true;
	assert_int_equal(image_build(&xfs_rfs, &spec, &err), 0);
	assert_string_not_equal(all, ext4);
	assert_string_not_equal(ext4, xfs);
	assert_string_not_equal(xfs, xfs_rfs);

	l = image_listing(td->path, all);
	assert_non_null(strstr(l, "sbin/mkfs.ext4\n"));
	assert_non_null(strstr(l, "sbin/mkfs.xfs\n"));
	assert_non_null(strstr(l, "sbin/mkfs.btrfs\n"));
	assert_non_null(strstr(l, "\nrootfs squashfs.ko\n"));
	free(l);

	l = image_listing(td->path, ext4);
	assert_non_null(strstr(l, "sbin/mkfs.ext4\n"));
	assert_null(strstr(l, "mkfs.xfs"));
	assert_null(strstr(l, "mkfs.btrfs"));
	assert_null(strstr(l, "xfs.ko"));
	assert_null(strstr(l, "squashfs.ko"));
	assert_non_null(strstr(l, "lib/modules/kc/virtio_blk.ko\n"));
	assert_non_null(strstr(l, "\n* virtio_blk.ko\n"));
	free(l);

	l = image_listing(td->path, xfs);
	assert_non_null(strstr(l, "sbin/mkfs.xfs\n"));
	assert_null(strstr(l, "mkfs.ext4"));
	assert_non_null(strstr(l, "\n* virtio_blk.ko\nxfs libcrc32c.ko\nxfs xfs.ko\n"));
	assert_null(strstr(l, "squashfs.ko"));
	free(l);

	l = image_listing(td->path, xfs_rfs);
	assert_non_null(strstr(l, "xfs xfs.ko\nrootfs squashfs.ko\n"));
	free(l);

	free(all);
	free(ext4);
	free(xfs);
	free(xfs_rfs);
	free(mods);
	free(home);
	buf_release(&err);
}

/* A bzImage (boot protocol 2.15, one setup sector) whose payload is the
 * file elf gzipped, with the 4-byte size the kernel's build appends. */
static void fake_bzimage(const char *dir, const char *elf, const char *out)
{
	char *cmd = xasprintf("gzip -c '%s' > '%s/p.gz' && printf 'SIZE' >> '%s/p.gz'", elf, dir, dir);
	char *gz = xasprintf("%s/p.gz", dir), *payload = NULL;
	unsigned char hdr[1024] = { 0 };
	size_t plen = 0;
	FILE *f;

	assert_int_equal(system(cmd), 0);
	assert_int_equal(read_file(&payload, &plen, gz, 1 << 24), 0);
	hdr[0x1f1] = 1;                          /* setup_sects: code at 1024 */
	memcpy(hdr + 0x202, "HdrS", 4);
	hdr[0x206] = 0x0f;
	hdr[0x207] = 0x02;
	hdr[0x248] = 16;                         /* payload_offset */
	hdr[0x24c] = (unsigned char)plen;        /* payload_length */
	hdr[0x24d] = (unsigned char)(plen >> 8);
	hdr[0x24e] = (unsigned char)(plen >> 16);
	f = fopen(out, "w");
	assert_non_null(f);
	fwrite(hdr, 1, sizeof(hdr), f);
	fwrite("0123456789abcdef", 1, 16, f);
	fwrite(payload, 1, plen, f);
	fclose(f);
	free(cmd);
	free(gz);
	free(payload);
}

/* The vmlinux of a kernel with the PVH note comes out of its bzImage and is
 * cached; a kernel without the note, or no bzImage, says why (-ENOEXEC),
 * and the reason is remembered. */
static void test_kernel_pvh(void **state)
{
	struct tmpdir *td = *state;
	const char *deb = "/boot/vmlinuz-6.12.117+deb12-cloud-amd64";
	char *home = xasprintf("%s/home", td->path), *bz = xasprintf("%s/bz", td->path);
	char *p1 = NULL, *p2 = NULL, *p3 = NULL, *elf = NULL;
	struct buf err = BUF_INIT;
	struct stat st1, st2;
	size_t len = 0;

	if (access(deb, R_OK))
		skip();
	assert_int_equal(image_kernel_pvh(&p1, home, deb, &err), 0);
	assert_non_null(strstr(p1, "/home/kernels/"));
	assert_int_equal(read_file(&elf, &len, p1, 1u << 30), 0);
	assert_true(len > (8u << 20));
	assert_memory_equal(elf, "\177ELF\2\1", 6);
	assert_int_equal(stat(p1, &st1), 0);
	assert_int_equal(image_kernel_pvh(&p2, home, deb, &err), 0);
	assert_string_equal(p1, p2);
	assert_int_equal(stat(p2, &st2), 0);
	assert_int_equal(st1.st_mtim.tv_nsec, st2.st_mtim.tv_nsec);

	/* an ELF without the note: /bin/busybox */
	fake_bzimage(td->path, "/bin/busybox", bz);
	buf_reset(&err);
	assert_int_equal(image_kernel_pvh(&p3, home, bz, &err), -ENOEXEC);
	assert_null(p3);
	assert_non_null(strstr(buf_str(&err), "has no PVH entry note (CONFIG_PVH)"));
	buf_reset(&err);
	assert_int_equal(image_kernel_pvh(&p3, home, bz, &err), -ENOEXEC);   /* remembered */
	assert_non_null(strstr(buf_str(&err), "has no PVH entry note"));

	buf_reset(&err);
	assert_int_equal(image_kernel_pvh(&p3, home, "/bin/busybox", &err), -ENOEXEC);
	assert_non_null(strstr(buf_str(&err), "no bzImage"));

	free(elf);
	free(p1);
	free(p2);
	free(home);
	free(bz);
	buf_release(&err);
}

static void test_init_script_is_compiled_in(void **state)
{
	char *file = NULL;

	(void)state;
	assert_int_equal(read_file(&file, NULL, "kernels/init", 1 << 20), 0);
	assert_string_equal(image_init_script, file);
	assert_non_null(strstr(image_init_script, "kcanary-agent run"));
	free(file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_module_order, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_cmdline),
		cmocka_unit_test_setup_teardown(test_kernel_release, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_build_and_cache, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_build_per_fs, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_kernel_pvh, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_init_script_is_compiled_in),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
