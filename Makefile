# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of the lnet-rs modules. KDIR defaults to the lab kernel
# (scripts/build-kernel.sh); any Rust-enabled 6.12 tree built with the same
# rustc works (scripts/kernel-check.sh says what a tree lacks).
#
#   make                  lnet.ko, ksocklnd.ko, ko2iblnd.ko: what a node installs
#   make lab              those and the lab's C test modules (tests/kmod/)
#   make modules_install  installs the three under INSTALL_MOD_DIR, where
#                         Lustre's Debian packages put LNet, then runs depmod
#                         (INSTALL_MOD_PATH stages them elsewhere)

KDIR ?= $(shell bash $(CURDIR)/scripts/kdir.sh)
LLVM ?= -19
INSTALL_MOD_DIR ?= updates/kernel/net/lustre
BINDINGS := rust/kapi/bindings_generated.rs
KMAKE = $(MAKE) -C $(KDIR) M=$(CURDIR) LLVM=$(LLVM) $(LLVM_TOOLS)

# DKMS adds CC=clang LD=ld.lld to its make command for a kernel built with
# clang: the unversioned names, which Debian's clang-19 does not install.
# LLVM names that toolchain already; its tools are named as the kernel's
# Makefile names them from LLVM (a prefix ending in /, or a -N suffix).
LLVM_PREFIX := $(filter %/,$(LLVM))
LLVM_SUFFIX := $(filter -%,$(LLVM))
LLVM_TOOLS :=
ifeq ($(origin CC)$(CC),command lineclang)
LLVM_TOOLS += CC=$(LLVM_PREFIX)clang$(LLVM_SUFFIX)
endif
ifeq ($(origin LD)$(LD),command lineld.lld)
LLVM_TOOLS += LD=$(LLVM_PREFIX)ld.lld$(LLVM_SUFFIX)
endif

.PHONY: all modules lab modules_install clean check-kernel

all: modules

check-kernel:
	@bash scripts/kernel-check.sh $(KDIR)

modules: check-kernel $(BINDINGS)
	$(KMAKE) modules

# The test modules go on top; lab_leak.ko leaks on purpose, so a node must
# never load what this builds beyond the three LNet modules.
lab: check-kernel $(BINDINGS)
	$(KMAKE) LNET_RS_LAB=y modules

# Rebuilt without the test modules first: kbuild installs what the last
# build's modules.order lists (and signs or compresses them as the kernel
# is configured to). kbuild keeps our source directories under
# INSTALL_MOD_DIR; Lustre's packages put the modules side by side there, so
# ours go up one level to take the same paths.
KRELEASE = $(shell cat $(KDIR)/include/config/kernel.release)
MODDEST = $(INSTALL_MOD_PATH)/lib/modules/$(KRELEASE)/$(INSTALL_MOD_DIR)
modules_install: modules
	$(KMAKE) INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) modules_install
	cd $(MODDEST) && for d in lnet socklnd o2iblnd; do \
		if [ -d $$d ]; then mv -f $$d/* . && rmdir $$d; fi; \
	done
	depmod $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $(KRELEASE)

# Regenerated when any header it reads changes.
$(BINDINGS): rust/kapi/bindings_helper.h rust/kapi/kapi_helpers.h rust/kapi/crypto_helpers.h $(wildcard include/linux/lnet/*.h) \
		$(wildcard include/uapi/linux/lnet/*.h) \
		scripts/gen-bindings.sh $(KDIR)/.config
	bash scripts/gen-bindings.sh $(KDIR) $@

# The test modules' directory is not in the sources DKMS gets.
clean:
	$(KMAKE) $(if $(wildcard tests/kmod/Kbuild),LNET_RS_LAB=y) clean
	rm -f $(BINDINGS)
