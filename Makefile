# kcanary: one plain Makefile (see README.md, "Source map, in reading order").
#
#   make            build build/kcanary and build/kcanary-agent
#   make test       what CI runs: unit tests, integration tests, check-layers
#   make check-layers  includes and calls of lib/, agent/, server/: no cycle,
#                   no arrow from a lower folder to a higher one
#                   (tools/check-layers.sh), one error carrier (check-errors.sh)
#   make test-asan  the unit tests under -fsanitize=address,undefined
#   make bench      benchmarks (numbers go into closing notes)
#   make check-kernel  slow: import linux-source-6.12, check the real mail
#                   cases' apply results, build three kernels
#   make check-bisect  slow: a real find-fix bisection over 6.12.117 + mailed
#                   series that must name v6 2/3 (~46 min here: 4 builds, 26 TCG runs)
#   make bench-bisect  the bisection strategies on simulated histories
#   make deps       apt-get every build, test and run dependency (root)
#
# Sources are found by wildcard: a new server/LAYER/foo.c is linked into
# libkcanary.a, a new lib/foo.c into libkc.a, a new tests/unit/test_foo.c becomes build/tests/test_foo.

PKG_CONFIG ?= pkg-config
CC ?= cc
V ?= 0
Q := $(if $(filter 1,$(V)),,@)

comma := ,
SANITIZE ?=
ifeq ($(SANITIZE),)
B := build
SANFLAGS :=
else
B := build-$(subst $(comma),-,$(SANITIZE))
SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

# pkg-config names of the libraries we link (all Debian -dev packages).
# lib/ is what both binaries share (the one wrapper each of libcurl, zlib
# and libmicrohttpd among it); each binary links its own libraries only.
LIB_PKGS    := libcurl zlib libmicrohttpd jansson nettle
SERVER_PKGS := libgit2 libcurl sqlite3 libvirt libmicrohttpd jansson inih nettle gmime-3.0 zlib
AGENT_PKGS  := libbpf jansson libcurl zlib libmicrohttpd yaml-0.1
TEST_PKGS   := cmocka

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Wwrite-strings -Wvla
CFLAGS ?= -O2 -g
BASE_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) $(SANFLAGS) -D_GNU_SOURCE -MMD -MP
LIB_CFLAGS    := $(shell $(PKG_CONFIG) --cflags $(LIB_PKGS))
LIB_LIBS      := $(shell $(PKG_CONFIG) --libs $(LIB_PKGS))
SERVER_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(SERVER_PKGS))
SERVER_LIBS   := $(shell $(PKG_CONFIG) --libs $(SERVER_PKGS)) -lm -lpthread
AGENT_CFLAGS  := $(shell $(PKG_CONFIG) --cflags $(AGENT_PKGS))
AGENT_LIBS    := $(shell $(PKG_CONFIG) --libs $(AGENT_PKGS) nettle) -lm
TEST_CFLAGS   := $(shell $(PKG_CONFIG) --cflags $(TEST_PKGS))
TEST_LIBS     := $(shell $(PKG_CONFIG) --libs $(TEST_PKGS))

# Include paths by folder: the server sees lib/ and server/ (its headers
# are included by layer: "store/db.h"), the agent lib/ and agent/ only.
$(B)/lib/%.o:         XFLAGS = -Ilib $(LIB_CFLAGS)
$(B)/server/%.o:      XFLAGS = -Ilib -Iserver -I$(B)/gen $(SERVER_CFLAGS)
$(B)/gen/%.o:         XFLAGS = -Ilib -Iserver
$(B)/agent/%.o:       XFLAGS = -Ilib -Iagent -I$(B)/gen $(AGENT_CFLAGS)
$(B)/tests/unit/%.o:  XFLAGS = -Ilib -Iserver -Itests/unit -I$(B)/gen $(SERVER_CFLAGS) $(TEST_CFLAGS)
$(B)/tests/agent/%.o: XFLAGS = -Ilib -Iagent -Itests/unit -Itests/agent $(AGENT_CFLAGS) $(TEST_CFLAGS)
$(B)/bench/fleet_load.o: XFLAGS = -Ilib -Iagent $(AGENT_CFLAGS)
$(B)/bench/fleet_cg.o:   XFLAGS = -Ilib -Iserver $(SERVER_CFLAGS)

LIB_SRCS    := $(wildcard lib/*.c)
LIB_OBJS    := $(LIB_SRCS:%.c=$(B)/%.o)
SERVER_SRCS := $(filter-out server/cli/main.c,$(wildcard server/*/*.c))
SERVER_OBJS := $(SERVER_SRCS:%.c=$(B)/%.o) $(B)/gen/schema_sql.o $(B)/gen/init_script.o
AGENT_SRCS  := $(filter-out agent/main.c $(wildcard agent/*.bpf.c),$(wildcard agent/*.c))
AGENT_OBJS  := $(AGENT_SRCS:%.c=$(B)/%.o)

UNIT_TESTS  := $(patsubst tests/unit/%.c,$(B)/tests/%,$(wildcard tests/unit/test_*.c))
AGENT_TESTS := $(patsubst tests/agent/%.c,$(B)/tests/agent_%,$(wildcard tests/agent/test_*.c))

SCHEMA := $(sort $(wildcard schema/*.sql))

# The agent's BPF probes (agent/probes.bpf.c): vmlinux.h from kernel BTF
# (tools/gen-vmlinux-h.sh: /sys/kernel/btf/vmlinux, else the .BTF of a
# /boot/vmlinuz-*), the object by clang -target bpf, the skeleton by
# bpftool, all in $(B)/gen and never committed. Without a BTF source,
# clang or bpftool the agent builds without probes (NO_PROBES=1 forces it)
# and says so at run time with a probes_unavailable record.
BPF_CLANG ?= clang
BPFTOOL ?= bpftool
NO_PROBES ?= $(shell { [ -r /sys/kernel/btf/vmlinux ] || ls /boot/vmlinuz-* >/dev/null 2>&1; } && \
	command -v $(BPFTOOL) >/dev/null 2>&1 && command -v $(BPF_CLANG) >/dev/null 2>&1 && echo 0 || echo 1)

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: FORCE demo demo-quick all test test-slow unit integration check-layers faults soak test-asan bench bench-bisect deps clean check-kernel check-bisect fuzz-ci

all: $(B)/kcanary $(B)/kcanary-agent

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(BASE_CFLAGS) $(XFLAGS) -c -o $@ $<

# Migrations are compiled in, so the binary needs no schema/ at run time.
# schema.list holds their names, rewritten only when the list changes: a
# deleted or renamed schema/*.sql rebuilds schema_sql.c though no file is
# newer than it.
$(B)/gen/schema.list: FORCE
	@mkdir -p $(dir $@)
	@echo '$(SCHEMA)' | cmp -s - $@ || echo '$(SCHEMA)' > $@
FORCE:

$(B)/gen/schema_sql.c: $(SCHEMA) $(B)/gen/schema.list tools/embed-schema.sh
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GEN     $@")
	$(Q)sh tools/embed-schema.sh $(SCHEMA) > $@

$(B)/gen/schema_sql.o: $(B)/gen/schema_sql.c
	$(Q)$(CC) $(BASE_CFLAGS) $(XFLAGS) -c -o $@ $<

# The guest's /init is compiled in too (server/guest/image.h).
$(B)/gen/init_script.c: kernels/init tools/embed-file.sh
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GEN     $@")
	$(Q)sh tools/embed-file.sh image_init_script kernels/init > $@

$(B)/gen/init_script.o: $(B)/gen/init_script.c
	$(Q)$(CC) $(BASE_CFLAGS) $(XFLAGS) -c -o $@ $<

ifeq ($(NO_PROBES),1)
$(B)/agent/probes.o: BASE_CFLAGS += -DKC_NO_PROBES
else
$(B)/gen/vmlinux.h: tools/gen-vmlinux-h.sh
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GEN     $@")
	$(Q)sh tools/gen-vmlinux-h.sh $@

$(B)/gen/probes.bpf.o: agent/probes.bpf.c agent/probes.h $(B)/gen/vmlinux.h
	@$(if $(Q),echo "  BPF     $<")
	$(Q)$(BPF_CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror \
		-I$(B)/gen -Iagent -c -o $@ $<

$(B)/gen/probes.skel.h: $(B)/gen/probes.bpf.o
	@$(if $(Q),echo "  SKEL    $@")
	$(Q)$(BPFTOOL) gen skeleton $< name probes_bpf > $@

$(B)/agent/probes.o: $(B)/gen/probes.skel.h
endif

$(B)/libkc.a: $(LIB_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/libkcanary.a: $(SERVER_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/libkcagent.a: $(AGENT_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/kcanary: $(B)/server/cli/main.o $(B)/libkcanary.a $(B)/libkc.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(SANFLAGS) -o $@ $^ $(SERVER_LIBS)

$(B)/kcanary-agent: $(B)/agent/main.o $(B)/libkcagent.a $(B)/libkc.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(SANFLAGS) -o $@ $^ $(AGENT_LIBS)

$(B)/tests/test_%: $(B)/tests/unit/test_%.o $(B)/libkcanary.a $(B)/libkc.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(SANFLAGS) -o $@ $^ $(SERVER_LIBS) $(TEST_LIBS)

$(B)/tests/agent_test_%: $(B)/tests/agent/test_%.o $(B)/libkcagent.a $(B)/libkc.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(SANFLAGS) -o $@ $^ $(AGENT_LIBS) $(TEST_LIBS)

# The test command of README.md: unit tests, every fuzz target briefly,
# integration tests, the fault table, then the layers of the include graph
# (last, so a misplaced #include does not hide the tests' results).
test: unit fuzz-ci integration faults check-layers

# Fault injection (issue 18): a killed ingest, a full disk, a killed agent
# daemon, hostile streams and HTTP; prints a table (tests/fault/run.sh).
# `make soak` runs the long versions (20 agent kills, 64 concurrent agents)
# and the guest ones (libvirtd restarted mid-run, 20 coordinator SIGKILLs:
# tests/integration/).
faults: all $(UNIT_TESTS) $(AGENT_TESTS)
	$(Q)B=$(B) sh tests/fault/run.sh

soak: all $(UNIT_TESTS) $(AGENT_TESTS)
	$(Q)SOAK=1 B=$(B) sh tests/fault/run.sh

# and one error carrier in every public header (tools/check-errors.sh:
# its list of functions without struct buf *err is for reading; it fails
# only on another carrier, error.h)
check-layers: all
	$(Q)sh tools/check-layers.sh $(B)
	$(Q)out=$$(sh tools/check-errors.sh) || { echo "$$out" | sed -n '/^check-errors:/,$$p'; exit 1; }

unit: all $(UNIT_TESTS) $(AGENT_TESTS)
	$(Q)B=$(B) sh tests/run-unit.sh $(UNIT_TESTS) $(AGENT_TESTS)

integration: all
	$(Q)B=$(B) sh tests/integration/run.sh

# The integration tests tests/integration/slow.txt lists (each with why):
# slow, and not needed on every change, so not part of `make test`; run
# before resolving an issue that touches what they cover.
test-slow: all
	$(Q)B=$(B) sh tests/integration/run.sh --slow

# Slow (a real kernel import and three kernel builds; tens of minutes on 2
# cores), so not part of `make test`.
check-kernel: all
	$(Q)B=$(B) sh tests/kernel/check-kernel.sh

# Slow (hours of kernel builds): a real find-fix bisection over Debian's
# 6.12.117 plus mailed series, which must name v6 2/3 of the seed series.
check-bisect: all
	$(Q)B=$(B) sh tests/kernel/check-bisect.sh

test-asan:
	$(Q)$(MAKE) --no-print-directory SANITIZE=address,undefined unit

# The main job on real kernels (README): see tools/demo.sh.
demo: deps all
	$(Q)B=$(B) sh tools/demo.sh full

demo-quick: deps all
	$(Q)B=$(B) sh tools/demo.sh quick

bench: all $(B)/bench/fleet_load
	$(Q)B=$(B) sh bench/run.sh

# The load generator of bench/b_fleet_ingest.sh: the agent's own sender
# (agent/http_out.c) in 64 threads, and sqlite3 to check the store after.
$(B)/bench/fleet_load: $(B)/bench/fleet_load.o $(B)/libkcagent.a $(B)/libkc.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(SANFLAGS) -o $@ $^ $(AGENT_LIBS) $(shell $(PKG_CONFIG) --libs sqlite3) -lpthread

# The server's side of fleet batches without a socket, for callgrind's
# instruction count (bench/fleet_cg.c).
$(B)/bench/fleet_cg: $(B)/bench/fleet_cg.o $(B)/libkcanary.a $(B)/libkc.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(SANFLAGS) -o $@ $^ $(SERVER_LIBS)

# The bisection simulator alone (also part of make bench).
bench-bisect: all
	$(Q)B=$(B) sh bench/b_bisect.sh

deps:
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(DEB_PKGS)
	@# Debian's npm (the browser test's npm ci), unless the installed nodejs
	@# already bundles one (NodeSource's conflicts with Debian's npm).
	command -v npm >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends npm

# libFuzzer targets: make fuzz-ingest [FUZZ_SECONDS=600]. The corpus in
# tests/fuzz/<name>/ is kept; new inputs land in build-fuzz/corpus-<name>.
FUZZ_SECONDS ?= 60
FUZZ_SERVER_SRCS = $(filter-out server/cli/%,$(wildcard server/*/*.c)) $(LIB_SRCS) \
	build/gen/schema_sql.c build/gen/init_script.c
build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_SERVER_SRCS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $@")
	$(Q)clang -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -fno-omit-frame-pointer \
		-Ilib -Iserver -Ibuild/gen $(SERVER_CFLAGS) -o $@ $^ $(SERVER_LIBS)

# Every tests/fuzz/fuzz_NAME.c is a target fuzz-NAME (a pattern in .PHONY is
# taken literally, so the names are listed; and make skips implicit rules
# for phony targets, so the rule is a static pattern over those names).
# fuzz-mbox has its own rule below (its dictionary and mail fixtures).
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
.PHONY: $(addprefix fuzz-,$(FUZZ_NAMES))

$(addprefix fuzz-,$(filter-out mbox,$(FUZZ_NAMES))): fuzz-%: build-fuzz/fuzz_%
	@mkdir -p build-fuzz/corpus-$*
	./build-fuzz/fuzz_$* -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix=build-fuzz/ build-fuzz/corpus-$* tests/fuzz/$*

# Part of make test: each target replays its kept corpus (tests/fuzz/NAME/,
# left untouched) and fuzzes on for FUZZ_CI_SECONDS from there; the first
# sanitizer report or abort() fails the build (-fno-sanitize-recover=all),
# the input that did it in build-fuzz/ci-crash-NAME-*.
FUZZ_CI_SECONDS ?= 5
fuzz-ci: $(addprefix build-fuzz/fuzz_,$(FUZZ_NAMES))
	$(Q)for n in $(FUZZ_NAMES); do \
		rm -rf build-fuzz/ci-corpus-$$n && mkdir -p build-fuzz/ci-corpus-$$n && \
		echo "  FUZZ    $$n: $$(ls tests/fuzz/$$n | wc -l) kept inputs, then $(FUZZ_CI_SECONDS) s" && \
		./build-fuzz/fuzz_$$n -max_total_time=$(FUZZ_CI_SECONDS) -timeout=10 -rss_limit_mb=2048 \
			-max_len=48000 -artifact_prefix=build-fuzz/ci-crash-$$n- \
			build-fuzz/ci-corpus-$$n tests/fuzz/$$n > build-fuzz/ci-$$n.log 2>&1 || \
			{ tail -n 40 build-fuzz/ci-$$n.log; echo "fuzz-ci: fuzz_$$n failed (log: build-fuzz/ci-$$n.log)"; exit 1; }; \
		grep -h '^#[0-9]*.*DONE' build-fuzz/ci-$$n.log | sed "s/^/    /"; \
	done

clean:
	rm -rf build build-*

# Everything make deps installs, by what needs it.
DEB_PKGS := build-essential pkg-config clang llvm bpftool \
	libgit2-dev libcurl4-openssl-dev libsqlite3-dev sqlite3 libvirt-dev \
	libbpf-dev libelf-dev zlib1g-dev libmicrohttpd-dev libjansson-dev \
	libinih-dev libcmocka-dev nettle-dev libgmime-3.0-dev chromium nodejs prometheus curl \
	libclang-rt-14-dev \
	qemu-system-x86 libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients \
	busybox-static cpio e2fsprogs xfsprogs btrfs-progs tini kmod xz-utils \
	linux-image-6.12.117+deb12-cloud-amd64-unsigned \
	linux-image-6.12.107+deb12-cloud-amd64-unsigned \
	linux-source-6.12 ccache flex bison bc dwarves libssl-dev tar git time \
	mmdebstrap squashfs-tools fio bpftrace stress-ng libyaml-dev linux-perf \
	public-inbox b4 python3 distcc

-include $(shell find $(B) -name '*.d' 2>/dev/null)

# libFuzzer over the mail → series parser (clang; not part of make test).
#   make fuzz-mbox FUZZ_SECONDS=600
# New inputs go to build-fuzz/corpus-mbox; `make fuzz-mbox-merge` folds the
# ones that add coverage into the kept corpus tests/fuzz/mbox/.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_B := build-fuzz
FUZZ_SRCS := server/wrap/mbox.c server/kernel/series.c server/kernel/series_patch.c \
	server/kernel/series_tags.c server/kernel/series_body.c server/kernel/series_item.c server/kernel/lkp_report.c lib/util.c lib/log.c tests/fuzz/fuzz_mbox.c
FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer -g -O1 -std=gnu11 $(WARN) -D_GNU_SOURCE -Ilib -Iserver \
	$(shell $(PKG_CONFIG) --cflags gmime-3.0)
.PHONY: fuzz-mbox fuzz-mbox-merge

$(FUZZ_B)/fuzz_mbox: $(FUZZ_SRCS) server/wrap/mbox.h $(wildcard server/kernel/series*.h) server/kernel/lkp_report.h lib/util.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(FUZZ_SRCS) $(shell $(PKG_CONFIG) --libs gmime-3.0)

fuzz-mbox: $(FUZZ_B)/fuzz_mbox
	@mkdir -p $(FUZZ_B)/corpus-mbox
	$(FUZZ_B)/fuzz_mbox -max_total_time=$(FUZZ_SECONDS) -max_len=48000 -rss_limit_mb=2048 \
		-timeout=10 -dict=tests/fuzz/mbox.dict -print_final_stats=1 \
		-artifact_prefix=$(FUZZ_B)/ \
		$(FUZZ_B)/corpus-mbox tests/fuzz/mbox tests/fixtures/mail

fuzz-mbox-merge: $(FUZZ_B)/fuzz_mbox
	@mkdir -p $(FUZZ_B)/merged-mbox
	$(FUZZ_B)/fuzz_mbox -merge=1 -max_len=48000 $(FUZZ_B)/merged-mbox tests/fuzz/mbox $(FUZZ_B)/corpus-mbox
