# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# xnf - build everything out of tree under $(OUTPUT).
#   make              build BPF objects, skeletons, libxnf, xnf, tests, tools
#   make check        unit tests and traffic tests
#   make install      xnf, its man page, units, ... below PREFIX (and DESTDIR)
#   make deb          a Debian package, built under $(OUTPUT)/deb
#   make bench-micro  ns/packet of each NF, chain and firewall size
#   make help         all targets
# V=1 shows full commands.

OUTPUT ?= $(abspath build)
CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= cc
PKG_CONFIG ?= pkg-config

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-9s %s\n' "$(1)" "$(patsubst $(OUTPUT)/%,%,$(2))";
endif

.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SUFFIXES:

# A fresh machine: install what is missing before anything else is read.
# INSTALL_DEPS=no skips it (the Debian build, whose Build-Depends
# dpkg-buildpackage has checked).
NODEPS_GOALS := clean help uninstall
INSTALL_DEPS ?= yes
ifneq ($(INSTALL_DEPS),no)
ifneq ($(filter-out $(NODEPS_GOALS),$(MAKECMDGOALS) all),)
DEPS_MISSING := $(shell scripts/install-deps.sh --check)
ifneq ($(DEPS_MISSING),)
$(info   INSTALL   $(DEPS_MISSING))
DEPS_RC := $(shell scripts/install-deps.sh >&2; echo $$?)
ifneq ($(DEPS_RC),0)
$(error scripts/install-deps.sh failed; run it as root to see why)
endif
endif
endif
endif

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' \
	-e 's/ppc64le/powerpc/' -e 's/s390x/s390/')
# clang -target bpf does not know the host's system include directories;
# add them after its own so <asm/types.h> and friends resolve.
CLANG_BPF_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

BPF_CFLAGS := -g -O2 --target=bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) \
	-Wall -Werror -Wno-unused-function -I$(OUTPUT) -Iinclude/uapi -Ibpf \
	$(CLANG_BPF_SYS_INCLUDES) -MMD -MP
CFLAGS ?= -g -O2
XNF_CFLAGS := $(CPPFLAGS) $(CFLAGS) -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-Wno-missing-field-initializers -Werror \
	$(shell $(PKG_CONFIG) --cflags libbpf libxdp 2>/dev/null) -MMD -MP
LDLIBS := $(shell $(PKG_CONFIG) --libs libbpf libxdp 2>/dev/null) -lelf -lz -lm -lpthread

# Rooms and what each may include: a sideways include does not build.
#   include/uapi  what crosses the BPF/user boundary (everyone)
#   include       libxnf's API (everyone in user space but common/)
#   lib/          libxnf; userspace/ the AF_XDP runtime, linked into it
#   common/       code the CLI, tools and tests share (libxnf-common.a)
#   cli/, tools/, selftests/unit/  front ends of the two libraries
# Skeletons ($(OUTPUT)/bpf) are for the code that loads programs.
INC_lib := -Iinclude/uapi -Iinclude -Ilib -I$(OUTPUT)/bpf
# The AF_XDP runtime is part of libxnf: it reads the instance's tables
# through lib/dp_priv.h.
INC_userspace := -Iinclude/uapi -Iinclude -Iuserspace -Ilib -I$(OUTPUT)/bpf
INC_common := -Iinclude/uapi -Icommon
INC_cli := -Iinclude/uapi -Iinclude -Icommon -Icli -I$(OUTPUT)/cli
# Where `xnf model` finds the model's Python package (tools/xnf_model/).
XNF_PYTHONDIR ?= $(abspath tools)
FLAGS_cli := -DXNF_PYTHONDIR='"$(XNF_PYTHONDIR)"'
INC_tools := -Iinclude/uapi -Iinclude -Icommon -Itools -I$(OUTPUT)/bpf
# The unit tests are white-box tests of libxnf (the instance's tables,
# lib/dp_priv.h) and of the AF_XDP runtime (its frame accounting and NF
# internals): they see lib/'s and userspace/'s private headers.
# test.h passes a union holding a long double by value; GCC's note that
# its ABI changed in GCC 4.4 says nothing about this code.
FLAGS_selftests := -Wno-psabi
INC_selftests := -Iinclude/uapi -Iinclude -Icommon -Iselftests/unit \
	-Iuserspace -Ilib -I$(OUTPUT)/bpf

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.skel.h,$(BPF_SRCS))

CLI_SRCS := $(wildcard cli/*.c)
CLI_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(CLI_SRCS))
XNF := $(OUTPUT)/xnf
LIB_SRCS := $(wildcard lib/*.c) $(wildcard userspace/*.c)
LIB_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(LIB_SRCS))
LIB := $(OUTPUT)/libxnf.a
COMMON_SRCS := $(wildcard common/*.c)
COMMON_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(COMMON_SRCS))
COMMON := $(OUTPUT)/libxnf-common.a

UNIT_SRCS := $(wildcard selftests/unit/*.c)
UNIT_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(UNIT_SRCS))
UNIT := $(OUTPUT)/test_unit

TOOLS := $(OUTPUT)/bench-micro
# The benchmark harness's rule sets (tools/bench/, `make bench`).
TOOLS += $(OUTPUT)/xnf-fwgen
# The bare AF_XDP forwarder the worker is measured against.
TOOLS += $(OUTPUT)/xnf-xskfwd
# Traffic generator and sink (tools/gen.c, tools/sink.c).
TOOLS += $(OUTPUT)/xnf-gen $(OUTPUT)/xnf-sink

.PHONY: all
all: $(BPF_OBJS) $(SKELS) $(LIB) $(COMMON) $(XNF) $(UNIT) $(TOOLS)

$(OUTPUT) $(OUTPUT)/bpf:
	$(Q)mkdir -p $@

# Kernel types for the tracing program, from the running kernel's BTF.
# Rewritten only when it changes, so objects are not rebuilt for nothing.
$(OUTPUT)/vmlinux.h: /sys/kernel/btf/vmlinux | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file $< format c > $@.tmp
	$(Q)cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@

# The NFs of the registry (XNF_NFS in include/uapi/xnf_nfs.h), by name, as
# the C preprocessor reads the list. The includes that a shared file would
# otherwise list NF by NF are generated from them: each NF's bpf/NAME.bpf.h
# for the fused chain (bpf/fused.bpf.c), each NF's skeleton for the loader
# (lib/dataplane.c). A line of the registry without its files is a
# compile error there.
NF_NAMES = $(shell echo 'XNF_NFS(NF_)' | $(CC) -E -P -x c \
	-include include/uapi/xnf_nfs.h '-DNF_(id,name,flags)=name' -)

$(OUTPUT)/nf_progs.h: include/uapi/xnf_nfs.h | $(OUTPUT)
	$(call msg,GEN,$@)
	$(if $(NF_NAMES),,$(error cannot read the NFs of include/uapi/xnf_nfs.h))
	$(Q)printf '#include "%s.bpf.h"\n' $(NF_NAMES) >$@

$(OUTPUT)/bpf/nf_skels.h: include/uapi/xnf_nfs.h | $(OUTPUT)/bpf
	$(call msg,GEN,$@)
	$(if $(NF_NAMES),,$(error cannot read the NFs of include/uapi/xnf_nfs.h))
	$(Q)printf '#include "%s.skel.h"\n' $(NF_NAMES) >$@

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c | $(OUTPUT)/bpf $(OUTPUT)/vmlinux.h $(OUTPUT)/nf_progs.h
	$(call msg,CLANG-BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MF $(@:.o=.d) -c $< -o $@

$(OUTPUT)/bpf/%.skel.h: $(OUTPUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name xnf_$* > $@

# Every C object may include any skeleton; -MMD records which it really
# does. The room is the first directory of the source's path.
room = $(firstword $(subst /, ,$(1)))
$(OUTPUT)/%.o: %.c | $(SKELS) $(OUTPUT)/bpf/nf_skels.h
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(XNF_CFLAGS) $(INC_$(call room,$<)) $(FLAGS_$(call room,$<)) -c $< -o $@

# `xnf -V`: the version (scripts/version.sh: git describe, else VERSION)
# and libxdp's, which has no call that returns it at run time. Made on
# every build, rewritten only when it changes: then only cmd_version.o is
# compiled again.
$(OUTPUT)/cli/version.h: FORCE
	$(Q)mkdir -p $(@D)
	$(Q)printf '#define XNF_VERSION "%s"\n#define XNF_LIBXDP_VERSION "%s"\n' \
		"$$(scripts/version.sh)" "$$($(PKG_CONFIG) --modversion libxdp)" >$@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm $@.tmp; else \
		printf '  %-9s %s\n' GEN cli/version.h; mv $@.tmp $@; fi
$(OUTPUT)/cli/cmd_version.o: $(OUTPUT)/cli/version.h

.PHONY: FORCE
FORCE:

$(LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(COMMON): $(COMMON_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(XNF): $(CLI_OBJS) $(LIB) $(COMMON)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(XNF_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(UNIT): $(UNIT_OBJS) $(LIB) $(COMMON)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(XNF_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/bench-micro: $(OUTPUT)/tools/bench_micro.o $(LIB) $(COMMON)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(XNF_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/xnf-xskfwd: $(OUTPUT)/tools/xskfwd.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(XNF_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/xnf-fwgen: $(OUTPUT)/tools/fwgen.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(XNF_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/xnf-gen $(OUTPUT)/xnf-sink: $(OUTPUT)/xnf-%: $(OUTPUT)/tools/%.o $(LIB) $(COMMON)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(XNF_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# make install [PREFIX=/usr/local] [DESTDIR=DIR]: xnf in sbin, the traffic
# tools in bin, the man pages, bash completion, the model's Python package
# (a private module directory, share/xnf/python, where `xnf model` looks
# next to its binary), the systemd units and generator, the examples, the
# monitoring mixin (share/xnf/monitoring: Grafana dashboard, Prometheus
# rules and their tests, docs/monitoring.md), and
# /etc/xnf/xnf.conf unless there is one. The units say /usr/sbin/xnf;
# another PREFIX is written into them. `make uninstall` removes it all but
# /etc/xnf (the operator's configuration).
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
SBINDIR ?= $(PREFIX)/sbin
BINDIR ?= $(PREFIX)/bin
MAN1DIR ?= $(PREFIX)/share/man/man1
MAN8DIR ?= $(PREFIX)/share/man/man8
DATADIR ?= $(PREFIX)/share/xnf
DOCDIR ?= $(PREFIX)/share/doc/xnf
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
UNITDIR ?= $(PREFIX)/lib/systemd/system
GENERATORDIR ?= $(PREFIX)/lib/systemd/system-generators
INSTALL ?= install
MODEL_SRCS := $(wildcard tools/xnf_model/*.py)
MONITORING := dashboards/xnf.json alerts/xnf-alerts.yaml \
	tests/xnf-alerts.test.yaml
UNITS := xnf.service xnf-worker@.service xnf-route-sync.service \
	xnf-neigh-follow.service xnf-exporter.service xnf-log.service

# What is installed, built without the tests and benchmark tools.
.PHONY: programs
programs: $(XNF) $(OUTPUT)/xnf-gen $(OUTPUT)/xnf-sink

.PHONY: install uninstall
install: programs
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)$(INSTALL) -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(MAN1DIR) $(DESTDIR)$(MAN8DIR) $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(DATADIR)/python/xnf_model $(DESTDIR)$(DOCDIR)/examples \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(GENERATORDIR) \
		$(DESTDIR)$(SYSCONFDIR)/xnf/worker \
		$(addprefix $(DESTDIR)$(DATADIR)/monitoring/,dashboards alerts tests)
	$(Q)$(INSTALL) -m 0755 $(XNF) $(DESTDIR)$(SBINDIR)/xnf
	$(Q)$(INSTALL) -m 0755 $(OUTPUT)/xnf-gen $(OUTPUT)/xnf-sink $(DESTDIR)$(BINDIR)
	$(Q)$(INSTALL) -m 0644 docs/xnf.8 $(DESTDIR)$(MAN8DIR)/xnf.8
	$(Q)$(INSTALL) -m 0644 docs/xnf-gen.1 docs/xnf-sink.1 $(DESTDIR)$(MAN1DIR)
	$(Q)$(INSTALL) -m 0644 dist/bash-completion/xnf $(DESTDIR)$(BASHCOMPDIR)/xnf
	$(Q)$(INSTALL) -m 0644 $(MODEL_SRCS) $(DESTDIR)$(DATADIR)/python/xnf_model
	$(Q)for f in $(MONITORING); do \
		$(INSTALL) -m 0644 dist/monitoring/$$f \
			$(DESTDIR)$(DATADIR)/monitoring/$$f || exit 1; done
	$(Q)for u in $(UNITS); do \
		sed 's|/usr/sbin/xnf|$(SBINDIR)/xnf|g' dist/systemd/$$u \
			>$(DESTDIR)$(UNITDIR)/$$u && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; done
	$(Q)$(INSTALL) -m 0755 dist/systemd/xnf-generator $(DESTDIR)$(GENERATORDIR)/xnf-generator
	$(Q)$(INSTALL) -m 0644 dist/xnf.conf dist/worker.conf dist/route-sync.conf \
		$(DESTDIR)$(DOCDIR)/examples
	$(Q)[ -e $(DESTDIR)$(SYSCONFDIR)/xnf/xnf.conf ] || \
		$(INSTALL) -m 0644 dist/xnf.conf $(DESTDIR)$(SYSCONFDIR)/xnf/xnf.conf

uninstall:
	$(call msg,UNINSTALL,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(DESTDIR)$(SBINDIR)/xnf $(DESTDIR)$(BINDIR)/xnf-gen \
		$(DESTDIR)$(BINDIR)/xnf-sink $(DESTDIR)$(MAN8DIR)/xnf.8 \
		$(DESTDIR)$(MAN1DIR)/xnf-gen.1 $(DESTDIR)$(MAN1DIR)/xnf-sink.1 \
		$(DESTDIR)$(BASHCOMPDIR)/xnf $(DESTDIR)$(GENERATORDIR)/xnf-generator \
		$(addprefix $(DESTDIR)$(UNITDIR)/,$(UNITS))
	$(Q)rm -rf $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR)

# make deb: a Debian package (debian/, debhelper) built from a copy of the
# tree in $(OUTPUT)/deb, so nothing is written outside $(OUTPUT); the
# .deb lands in $(OUTPUT)/deb (scripts/build-deb.sh).
.PHONY: deb
deb:
	scripts/build-deb.sh $(OUTPUT)/deb

.PHONY: format check-format
format:
	scripts/check-format.sh --fix

check-format:
	scripts/check-format.sh

.PHONY: check unit
unit: $(UNIT)
	$(UNIT)

check: all
	$(UNIT)
	XNF=$(XNF) bats --timing selftests/*.bats

# The batching model (tools/xnf_model/, `xnf model`), the bench's wake-up
# tracer (tools/bench/waketrace.py) and its steadiness loop
# (tools/bench/steadiness.py): their unit tests, run
# by the Debian interpreter that has python3-numpy/-scipy (install-deps).
.PHONY: test-model
test-model:
	/usr/bin/python3 -m unittest discover -s selftests -p model_test.py
	/usr/bin/python3 -m unittest discover -s selftests -p waketrace_test.py
	/usr/bin/python3 -m unittest discover -s selftests -p steadiness_test.py
check: test-model
# The route-sync benchmark's table generator (tools/bench/rtgen.py).
.PHONY: test-rtgen
test-rtgen:
	/usr/bin/python3 -m unittest discover -s selftests -p rtgen_test.py
check: test-rtgen
# The instrument's statistics (tools/bench/stats.py: bootstrap, verdicts).
.PHONY: test-stats
test-stats:
	/usr/bin/python3 -m unittest discover -s selftests -p stats_test.py
check: test-stats
# Style is checked like behaviour (scripts/check-format.sh, .clang-format).
check: check-format

# The test bed of the traffic tests, a chain, routes, rules and a little
# traffic, then everything removed again (needs root).
.PHONY: demo
demo: all
	XNF=$(OUTPUT)/xnf scripts/demo.sh

.PHONY: bench-micro
bench-micro: $(OUTPUT)/bench-micro
	$(OUTPUT)/bench-micro

# The papers' measurements on a namespace testbed (tools/bench/bench.py):
# results in $(BENCH_OUT); QUICK=1 is the few-minute version. Needs root.
BENCH_OUT ?= $(OUTPUT)/bench
BENCH_ARGS ?=
.PHONY: bench
bench: all
	/usr/bin/python3 tools/bench/bench.py --build $(OUTPUT) --out $(BENCH_OUT) \
		$(if $(filter 1,$(QUICK)),--quick) $(BENCH_ARGS)

# Paced traffic through the 3-NF chain and an AF_XDP worker for
# SOAK_DURATION while routes, rules and chains change and the worker is
# restarted (tools/bench/soak.py): lost packets, counters that went
# backwards, memory and BPF objects at the start and the end. A benchmark,
# not part of `make check`; exits non-zero when a target is missed.
SOAK_DURATION ?= 30m
SOAK_SWAP ?= 60s
SOAK_KILL ?= 30s
SOAK_RATE ?= 1000
SOAK_OUT ?= $(OUTPUT)/soak
SOAK_ARGS ?=
.PHONY: soak
soak: all
	/usr/bin/python3 tools/bench/soak.py --build $(OUTPUT) --out $(SOAK_OUT) \
		--duration $(SOAK_DURATION) --swap $(SOAK_SWAP) --kill $(SOAK_KILL) \
		--rate $(SOAK_RATE) $(SOAK_ARGS)

# `xnf route sync` on a full Internet table (tools/bench/rtsync.py,
# docs/route-sync-bench.md): convergence, memory, and the delay of a
# change under a stream of updates. Not part of `make check`. Needs root
# and ~2 GB of memory.
RTSYNC_OUT ?= $(OUTPUT)/rtsync
RTSYNC_ARGS ?=
.PHONY: bench-rtsync
bench-rtsync: all
	/usr/bin/python3 tools/bench/rtsync.py --build $(OUTPUT) --out $(RTSYNC_OUT) $(RTSYNC_ARGS)

# SO_N xnf routers behind a BGP/ECMP edge with BFD (BIRD in namespaces,
# testbed/scaleout.bash): each drained, failed silently and with its
# links down under IPv4 and IPv6 traffic, SCALEOUT_ROUNDS times; a markdown report of
# the losses in SCALEOUT_OUT. Not part of `make check`. Needs root.
SCALEOUT_OUT ?= $(OUTPUT)/scale-out.md
SCALEOUT_ROUNDS ?= 2
.PHONY: scale-out
scale-out: all
	XNF=$(OUTPUT)/xnf scripts/scale-out.sh -o $(SCALEOUT_OUT) -r $(SCALEOUT_ROUNDS)

.PHONY: clean
clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

.PHONY: help
help:
	@echo 'make              build everything under $(OUTPUT)'
	@echo 'make check        unit tests (BPF_PROG_TEST_RUN) and traffic tests (bats)'
	@echo 'make unit         unit tests only'
	@echo 'make format       rewrite the C sources in the style of .clang-format (kernel style)'
	@echo 'make check-format list what clang-format would change; fails if anything (CI)'
	@echo 'make test-model   tests of the batching model (tools/xnf_model/)'
	@echo 'make bench-micro  ns/packet per NF, chain, fused chain, firewall size'
	@echo 'make bench        throughput, latency, loss, batch sizes of xnf and its peers (QUICK=1: a few minutes)'
	@echo '                  results in BENCH_OUT=DIR (default $(OUTPUT)/bench); BENCH_ARGS='--help' lists options'
	@echo 'make bench-rtsync xnf route sync on a full Internet table: convergence, memory, update delay'
	@echo '                  results in RTSYNC_OUT=DIR (default $(OUTPUT)/rtsync); RTSYNC_ARGS='--help' lists options'
	@echo 'make soak         SOAK_DURATION (default 30m) of paced traffic under route/rule/chain churn and worker restarts:'
	@echo '                  lost packets, counters, memory, BPF objects (SOAK_SWAP=60s SOAK_KILL=30s SOAK_RATE=1000 SOAK_OUT=DIR)'
	@echo 'make scale-out    N xnf routers behind BGP/ECMP/BFD (BIRD): drain and failover losses, report in SCALEOUT_OUT'
	@echo 'make demo         source, DUT and sink namespaces: attach, route, filter, send, show stats'
	@echo 'build/xnf-gen     traffic generator: xnf-gen DEV count N|duration SEC [rate PPS] [size 64..1518|imix|dc] ... (-h)'
	@echo 'build/xnf-sink    traffic sink: xnf-sink DEV [duration SEC] [count N] [interval SEC] [ready FILE] [-j] (-h)'
	@echo 'make install      install below PREFIX=$(PREFIX) (and DESTDIR); make uninstall removes it'
	@echo 'make deb          a Debian package in $(OUTPUT)/deb'
	@echo 'make clean        remove $(OUTPUT)'
	@echo 'V=1               show full commands'

-include $(wildcard $(OUTPUT)/bpf/*.d $(foreach r,lib userspace common cli tools selftests/unit,$(OUTPUT)/$(r)/*.d))
