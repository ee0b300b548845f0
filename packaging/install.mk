# install.mk -- make install [PREFIX=/usr/local] [DESTDIR=] [SYSCONFDIR=/etc]
# [SYSTEMDDIR=/lib/systemd/system]: the daemon and cudarem-smi in $(PREFIX)/bin;
# the shim, the emulated device and the shim's lib/ of NVIDIA library names in
# $(PREFIX)/lib/cudarem (the layout of build/, which both programs expect); the
# pkg-config file cudarem.pc (variables shim, libdir, cuda_dir); the systemd unit
# cudarem-server.service, which reads $(SYSCONFDIR)/cudarem/server.conf; that file's
# example; the documentation, and the manual pages cudarem-server(8) and
# cudarem-smi(1) (docs/man). make uninstall removes what install wrote.

PREFIX      ?= /usr/local
DESTDIR     ?=
SYSCONFDIR  ?= /etc
SYSTEMDDIR  ?= /lib/systemd/system
INST_BIN    := $(DESTDIR)$(PREFIX)/bin
INST_LIB    := $(DESTDIR)$(PREFIX)/lib/cudarem
INST_PC     := $(DESTDIR)$(PREFIX)/lib/pkgconfig
INST_DOC    := $(DESTDIR)$(PREFIX)/share/doc/cudarem
INST_MAN    := $(DESTDIR)$(PREFIX)/share/man
INST_UNIT   := $(DESTDIR)$(SYSTEMDDIR)
INST_CONF   := $(DESTDIR)$(SYSCONFDIR)/cudarem
INST_SUBST  := sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'

.PHONY: install uninstall
install: $(SERVER) $(SMI) $(SHIM) $(EMU_LIB) $(SHIM_LOADER_STUBS) $(SHIM_ALIASES)
	install -d $(INST_BIN) $(INST_LIB)/lib $(INST_PC) $(INST_DOC) $(INST_UNIT) $(INST_CONF) $(INST_MAN)/man1 $(INST_MAN)/man8
	install -m 755 $(SERVER) $(SMI) $(INST_BIN)/
	install -m 755 $(SHIM) $(EMU_LIB) $(INST_LIB)/
	install -m 755 $(SHIM_LOADER_STUBS) $(INST_LIB)/lib/
	for a in $(notdir $(SHIM_ALIASES)); do ln -sfn ../libcudarem.so $(INST_LIB)/lib/$$a; done
	$(INST_SUBST) packaging/cudarem.pc.in > $(INST_PC)/cudarem.pc
	$(INST_SUBST) packaging/cudarem-server.service.in > $(INST_UNIT)/cudarem-server.service
	install -m 644 packaging/server.conf $(INST_CONF)/server.conf.example
	install -m 644 README.md docs/*.md $(INST_DOC)/
	install -m 644 docs/man/cudarem-smi.1 $(INST_MAN)/man1/
	install -m 644 docs/man/cudarem-server.8 $(INST_MAN)/man8/

uninstall:
	rm -f $(INST_BIN)/cudarem-server $(INST_BIN)/cudarem-smi $(INST_PC)/cudarem.pc
	rm -f $(INST_UNIT)/cudarem-server.service $(INST_CONF)/server.conf.example
	rm -f $(INST_MAN)/man1/cudarem-smi.1 $(INST_MAN)/man8/cudarem-server.8
	rm -rf $(INST_LIB) $(INST_DOC)
