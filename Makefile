# dbtprof - build, test and demo.  `make help` lists the targets.
CC       ?= cc
AARCH64_CC ?= aarch64-linux-gnu-gcc
GUEST_CC ?= gcc
CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Werror
BASEFLAGS := -std=c11 -D_GNU_SOURCE -Iinclude -Ilib -fPIC $(WARN)
LDLIBS   := -lzstd -lcapstone -lpthread -lm
B        := build

LIB_SRCS    := $(sort $(wildcard lib/*/*.c))
LIB_OBJS    := $(LIB_SRCS:%.c=$(B)/%.o)
CMD_SRCS    := $(sort $(wildcard cmd/*.c))
CMD_OBJS    := $(CMD_SRCS:%.c=$(B)/%.o)
# The plugin carries only what it needs of the library (no Capstone).
PLUGIN_LIB  := lib/analysis/cache.c lib/util/file.c lib/util/err.c lib/util/buf.c lib/util/crc32c.c lib/trace/pred.c lib/trace/encode.c lib/trace/frame.c lib/isa/x86.c
PLUGIN_OBJS := $(B)/plugin/plugin.o $(PLUGIN_LIB:%.c=$(B)/%.o)
UNIT_SRCS   := $(sort $(wildcard tests/unit/test-*.c))
UNIT_BINS   := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)
FUZZ_SRCS   := $(sort $(wildcard tests/fuzz/fuzz-*.c))
GUEST_X86   := $(patsubst tests/guests/x86_64/%.S,$(B)/guests/x86_64/%,$(sort $(wildcard tests/guests/x86_64/*.S)))
GUEST_A64   := $(patsubst tests/guests/aarch64/%.S,$(B)/guests/aarch64/%,$(sort $(wildcard tests/guests/aarch64/*.S)))
GUEST_C     := $(patsubst tests/guests/c/%.c,$(B)/guests/c/%,$(sort $(wildcard tests/guests/c/*.c)))
GUEST_CA64  := $(patsubst tests/guests/c/%.c,$(B)/guests/c-aarch64/%,$(sort $(wildcard tests/guests/c/*.c)))

.PHONY: all deps bench-deps check asan demo guests unit fuzz clean format help bench
all: $(B)/dbtprof $(B)/libdbtp-qemu.so

help:
	@echo "make deps    install Debian packages the project needs (apt-get)"
	@echo "make bench-deps  also the benchmarks' extra compilers (clang 13-16)"
	@echo "make         build build/dbtprof and build/libdbtp-qemu.so"
	@echo "make check   build and run every test"
	@echo "make asan    run the test suite under ASan+UBSan"
	@echo "make demo    deps + build + record and summarise the bundled workload"
	@echo "make fuzz    run the libFuzzer harnesses for a while (FUZZ_SECONDS)"
	@echo "make bench   run the workload benchmark (long; see bench/README.md)"

deps:
	@sh tools/deps.sh

bench-deps:
	@sh tools/deps.sh bench

$(B)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(B)/libdbtp.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(B)/dbtprof: $(CMD_OBJS) $(B)/libdbtp.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CMD_OBJS) $(B)/libdbtp.a $(LDLIBS)

$(B)/plugin/plugin.o: plugin/plugin.c
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) -Iplugin -fvisibility=hidden $(CFLAGS) -MMD -MP -c $< -o $@

$(B)/libdbtp-qemu.so: $(PLUGIN_OBJS)
	$(CC) -shared $(CFLAGS) $(LDFLAGS) -o $@ $^ -lzstd -lpthread

$(B)/tests/%: tests/unit/%.c $(B)/libdbtp.a
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) -Itests/unit -o $@ $< $(B)/libdbtp.a $(LDLIBS)

$(B)/guests/x86_64/%: tests/guests/x86_64/%.S
	@mkdir -p $(@D)
	$(GUEST_CC) -nostdlib -static -no-pie -o $@ $<

$(B)/guests/aarch64/%: tests/guests/aarch64/%.S
	@mkdir -p $(@D)
	$(AARCH64_CC) -nostdlib -static -no-pie -o $@ $<

$(B)/guests/c/%: tests/guests/c/%.c tests/guests/c/marker.h
	@mkdir -p $(@D)
	$(GUEST_CC) -O1 -pthread $(WARN) -o $@ $<

$(B)/guests/c-aarch64/%: tests/guests/c/%.c tests/guests/c/marker.h
	@mkdir -p $(@D)
	$(AARCH64_CC) -O1 -pthread $(WARN) -o $@ $<

# Fuzz harnesses built as plain programs that replay saved inputs.
REPLAY_BINS := $(FUZZ_SRCS:tests/fuzz/fuzz-%.c=$(B)/tests/replay-%)
# Built like the fuzzers: CRC checks off, so saved inputs reach the decoder.
$(B)/tests/replay-%: tests/fuzz/fuzz-%.c tests/fuzz/replay.c tests/fuzz/input.h $(LIB_SRCS)
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION \
	  -o $@ $< tests/fuzz/replay.c $(LIB_SRCS) $(LDLIBS)

guests: $(GUEST_X86) $(GUEST_A64) $(GUEST_C) $(GUEST_CA64)
unit: $(UNIT_BINS) $(REPLAY_BINS)

check: all unit guests
	@B=$(B) sh tests/run.sh

asan:
	$(MAKE) B=build-asan CC=clang \
	  CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  LDFLAGS="-fsanitize=address,undefined" check-asan

# Under ASan the plugin stays uninstrumented (QEMU is not built with ASan),
# and so does the dbtprof that cpu-view runs under QEMU (an ASan program
# cannot reserve its shadow memory there); the suite below runs every unit
# test, fuzz replay and CLI test.
check-asan: $(B)/dbtprof unit guests
	@$(MAKE) --no-print-directory B=build CC=cc all CFLAGS="-O2 -g" LDFLAGS=
	@DBTPROF_PLUGIN=$(CURDIR)/build/libdbtp-qemu.so \
	  DBTPROF_CPU_VIEW_EXE=$(CURDIR)/build/dbtprof B=$(B) sh tests/run.sh

demo: deps all
	@sh tools/demo.sh

bench: all
	@sh bench/run.sh

fuzz:
	@sh tests/fuzz/run.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan

-include $(shell find $(B) -name '*.d' 2>/dev/null)
