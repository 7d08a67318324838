/* SPDX-License-Identifier: MIT */
/*
 * test-counter.c - the instruction count read from cachegrind's output
 * (its first event must be Ir; the "summary:" line's first number, up to
 * UINT64_MAX), and a hardware counter that opens or says why not.
 */
#include <errno.h>
#include <unistd.h>

#include "dbtp/counter.h"
#include "t.h"

static void reads(const char *s, uint64_t want)
{
	uint64_t ir = 0;
	dbtp_err err = {0};

	CHECK(dbtp_cachegrind_ir(s, strlen(s), &ir, &err) == 0);
	CHECK_EQ(ir, want);
}

static void fails(const char *s, int code, const char *msg)
{
	uint64_t ir = 7;
	dbtp_err err = {0};

	CHECK(dbtp_cachegrind_ir(s, strlen(s), &ir, &err) == -1);
	CHECK_EQ(ir, 7);
	CHECK_EQ(err.code, code);
	CHECK_STR(err.msg, msg);
}

int main(void)
{
	uint64_t n;
	dbtp_err err = {0};
	int fd = -1;

	/* as cachegrind --cache-sim=no writes it */
	reads("desc: I1 cache:         32768 B, 64 B, 8-way associative\n"
	      "cmd: ./loop\nevents: Ir\nfn=???\n0 20004\nsummary: 20004\n",
	      20004);
	/* with the cache simulation: Ir first, trailing blank */
	reads("events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw \n"
	      "summary: 20004 1 1 0 0 0 0 0 0",
	      20004);
	reads("events:Ir\nsummary:0\n", 0);
	reads("events: Ir\nsummary: 18446744073709551615\n", UINT64_MAX);
	/* a count word, not "events:" or "summary:" elsewhere in a line */
	reads("cmd: x events: Dr\nevents: Ir\nsummary: 5\n", 5);
	fails("", EINVAL, "no instruction count (an 'events: Ir' line)");
	fails("events: Dr Ir\nsummary: 1 2\n", EINVAL,
	      "no instruction count (an 'events: Ir' line)");
	fails("events: Irx\nsummary: 1\n", EINVAL,
	      "no instruction count (an 'events: Ir' line)");
	fails("events: Ir\n", EINVAL, "no 'summary:' line");
	fails("events: Ir\nsummary: \n", EINVAL, "no 'summary:' line");
	fails("events: Ir\nsummary: -1\n", EINVAL, "no 'summary:' line");
	fails("events: Ir\nsummary: 12x\n", EINVAL, "'summary:': not a count");
	fails("events: Ir\nsummary: 18446744073709551616\n", ERANGE,
	      "'summary:': the count overflows");
	fails("events: Ir\nsummary: 99999999999999999999999\n", ERANGE,
	      "'summary:': the count overflows");

	/* a counter opens, or says why there is none */
	if (dbtp_counter_open(0, DBTP_COUNTER_INSTRUCTIONS, &fd, &err)) {
		CHECK(err.msg[0] != '\0');
		CHECK(err.code == ENOENT || err.code == EOPNOTSUPP ||
		      err.code == ENODEV || err.code == EACCES ||
		      err.code == EPERM || err.code == ENOSYS);
	} else {
		/* enabled at this process's next execve: nothing counted yet */
		CHECK(dbtp_counter_read(fd, &n, &err) == 0);
		CHECK_EQ(n, 0);
		close(fd);
	}
	CHECK(dbtp_counter_read(-1, &n, &err) == -1);
	CHECK_EQ(err.code, EBADF);
	return T_DONE();
}
