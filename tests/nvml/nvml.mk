# nvml.mk -- tests of the shim's NVML: unit tests of its id formatting and parsing,
# and an end-to-end suite running an NVML client (tests/nvml/nvml_query.c, linked
# with no NVIDIA library) and pynvml through the shim against a real server.
#
# pynvml (PyPI nvidia-ml-py) lives in a virtual environment of its own, made once
# by tests/nvml/nvml-venv.sh at $(NVML_VENV) and shared by both build flavours.

NVML_QUERY := $(BUILD)/tests/nvml_query
NVML_VENV  := build/venv-nvml
NVML_VENV_PY := $(abspath $(NVML_VENV))/bin/python

UNIT_TESTS += $(BUILD)/tests/check_nvml_ids
E2E_TESTS  += $(BUILD)/tests/check_e2e_nvml

$(BUILD)/tests/check_nvml_ids: tests/nvml/check_nvml_ids.c tests/unit/crm_check.h interpose/crm_nvml.h \
                               $(BUILD)/obj/interpose/crm_nvml_ids.o | $(BUILD)/tests
	$(UNIT_LINK)

$(NVML_QUERY): tests/nvml/nvml_query.c tests/nvml/nvml_fns.def tests/nvml/nvml.mk | $(BUILD)/tests
	$(CC) $(CFLAGS) -Itests/nvml -o $@ $< $(LDFLAGS) -ldl

$(NVML_VENV)/.installed: tests/nvml/nvml-venv.sh
	PYTHON=$(PYTHON) tests/nvml/nvml-venv.sh $(NVML_VENV)

$(BUILD)/tests/check_e2e_nvml: tests/nvml/check_e2e_nvml.c $(E2E_HARNESS) tests/e2e/e2e_harness.h \
		tests/unit/crm_check.h tests/nvml/nvml.mk $(NVML_QUERY) $(NVML_VENV)/.installed | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) $(E2E_DEFS) -DNVML_VENV_PYTHON='"$(NVML_VENV_PY)"' -o $@ $< \
	    $(E2E_HARNESS) $(LDFLAGS) $(CHECK_LIBS)
