# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# xnf - build everything out of tree under $(OUTPUT).
#   make              build BPF objects, skeletons, libxnf, xnf, tests, tools
#   make check        unit tests and traffic tests
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
NODEPS_GOALS := clean help
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

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' \
	-e 's/ppc64le/powerpc/' -e 's/s390x/s390/')
# clang -target bpf does not know the host's system include directories;
# add them after its own so <asm/types.h> and friends resolve.
CLANG_BPF_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

BPF_CFLAGS := -g -O2 --target=bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) \
	-Wall -Werror -Wno-unused-function -I$(OUTPUT) -Ibpf \
	$(CLANG_BPF_SYS_INCLUDES) -MMD -MP
CFLAGS ?= -g -O2
XNF_CFLAGS := $(CFLAGS) -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-Wno-missing-field-initializers -Werror -I$(OUTPUT)/bpf -Ibpf -Iloader -Itools -Iselftests/unit \
	$(shell $(PKG_CONFIG) --cflags libbpf libxdp 2>/dev/null) -MMD -MP
LDLIBS := $(shell $(PKG_CONFIG) --libs libbpf libxdp 2>/dev/null) -lelf -lz -lm -lpthread

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.skel.h,$(BPF_SRCS))

CLI_SRCS := loader/main.c loader/args.c loader/json.c $(wildcard loader/cmd_*.c)
CLI_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(CLI_SRCS))
XNF := $(OUTPUT)/xnf
LIB_SRCS := $(filter-out $(CLI_SRCS),$(wildcard loader/*.c))
LIB_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(LIB_SRCS))
LIB := $(OUTPUT)/libxnf.a

UNIT_SRCS := $(wildcard selftests/unit/*.c)
UNIT_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(UNIT_SRCS)) $(OUTPUT)/tools/sandbox.o
UNIT := $(OUTPUT)/test_unit

TOOLS := $(if $(wildcard tools/bench_micro.c),$(OUTPUT)/bench-micro)

.PHONY: all
all: $(BPF_OBJS) $(SKELS) $(LIB) $(XNF) $(UNIT) $(TOOLS)

$(OUTPUT) $(OUTPUT)/bpf $(OUTPUT)/loader $(OUTPUT)/selftests/unit $(OUTPUT)/tools:
	$(Q)mkdir -p $@

# Kernel types for the tracing program, from the running kernel's BTF.
# Rewritten only when it changes, so objects are not rebuilt for nothing.
$(OUTPUT)/vmlinux.h: /sys/kernel/btf/vmlinux | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file $< format c > $@.tmp
	$(Q)cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c | $(OUTPUT)/bpf $(OUTPUT)/vmlinux.h
	$(call msg,CLANG-BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MF $(@:.o=.d) -c $< -o $@

$(OUTPUT)/bpf/%.skel.h: $(OUTPUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name xnf_$* > $@

# Every C object may include any skeleton; -MMD records which it really does.
$(OUTPUT)/%.o: %.c | $(SKELS)
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(XNF_CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(XNF): $(CLI_OBJS) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(XNF_CFLAGS) $^ $(LDLIBS) -o $@

$(UNIT): $(UNIT_OBJS) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(XNF_CFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/bench-micro: $(OUTPUT)/tools/bench_micro.o $(OUTPUT)/tools/sandbox.o \
		$(OUTPUT)/selftests/unit/pkt.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(XNF_CFLAGS) $^ $(LDLIBS) -o $@

.PHONY: check unit
unit: $(UNIT)
	$(UNIT)

check: all
	$(UNIT)
	XNF=$(XNF) bats --timing selftests/*.bats

# The test bed of the traffic tests, a chain, routes, rules and a little
# traffic, then everything removed again (needs root).
.PHONY: demo
demo: all
	XNF=$(OUTPUT)/xnf scripts/demo.sh

.PHONY: bench-micro
bench-micro: $(OUTPUT)/bench-micro
	$(OUTPUT)/bench-micro

.PHONY: clean
clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

.PHONY: help
help:
	@echo 'make              build everything under $(OUTPUT)'
	@echo 'make check        unit tests (BPF_PROG_TEST_RUN) and traffic tests (bats)'
	@echo 'make unit         unit tests only'
	@echo 'make bench-micro  ns/packet per NF, chain, fused chain, firewall size'
	@echo 'make demo         source, DUT and sink namespaces: attach, route, filter, send, show stats'
	@echo 'make clean        remove $(OUTPUT)'
	@echo 'V=1               show full commands'

-include $(wildcard $(OUTPUT)/bpf/*.d $(OUTPUT)/loader/*.d $(OUTPUT)/selftests/unit/*.d $(OUTPUT)/tools/*.d)
