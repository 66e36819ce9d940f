# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of the lnet-rs modules. KDIR defaults to the lab kernel
# (scripts/build-kernel.sh); any Rust-enabled 6.12 tree built with the same
# rustc works.

KDIR ?= $(shell bash $(CURDIR)/scripts/kdir.sh)
LLVM ?= -19
BINDINGS := rust/kapi/bindings_generated.rs

.PHONY: all modules clean

all: modules

modules: $(BINDINGS)
	$(MAKE) -C $(KDIR) M=$(CURDIR) LLVM=$(LLVM) modules

# Regenerated when any header it reads changes.
$(BINDINGS): rust/kapi/bindings_helper.h rust/kapi/kapi_helpers.h rust/kapi/crypto_helpers.h $(wildcard include/linux/lnet/*.h) \
		$(wildcard include/uapi/linux/lnet/*.h) \
		scripts/gen-bindings.sh $(KDIR)/.config
	bash scripts/gen-bindings.sh $(KDIR) $@

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) LLVM=$(LLVM) clean
	rm -f $(BINDINGS)
